#!/usr/bin/env node
// Part of `npm run lint`: renders each overlay of deploy/kubernetes with `kubectl kustomize` and validates every
// object it renders against the Kubernetes API's schemas, offline (kubernetes-models: the API's OpenAPI schemas
// compiled into validators, one class per kind). A kind the validator does not know fails the check too.
// test/deploy/kubernetes-manifests.test.ts checks what the schemas cannot: probes, autoscalers, egress, secrets.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const OVERLAYS = ['development', 'production'];

/** The rendered objects of one overlay. */
function render(overlay) {
  try {
    const text = execFileSync('kubectl', ['kustomize', join(root, 'deploy/kubernetes/overlays', overlay)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return parseAllDocuments(text).map((doc) => doc.toJS());
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
    console.error(
      'deploy/kubernetes: no kubectl to render the overlays (kubectl 1.27 or later, which embeds kustomize 5)',
    );
    process.exit(1);
  }
}

/** The validator's module of an apiVersion: `v1` → kubernetes-models/v1, `apps/v1` → kubernetes-models/apps/v1. */
async function modelsOf(apiVersion) {
  try {
    return await import(`kubernetes-models/${apiVersion}`);
  } catch (err) {
    if (err.code === 'ERR_MODULE_NOT_FOUND' && /'kubernetes-models'/.test(err.message)) throw err;
    return {};
  }
}

/** Every problem of one object: none when it is valid. */
async function problemsOf(object) {
  const Model = (await modelsOf(object.apiVersion))[object.kind];
  if (!Model) return [`${object.apiVersion} ${object.kind} is not a Kubernetes API type`];
  try {
    new Model(object).validate();
    return [];
  } catch (err) {
    return [err.message];
  }
}

async function main() {
  let failed = 0;
  for (const overlay of OVERLAYS) {
    const objects = render(overlay);
    for (const object of objects) {
      for (const problem of await problemsOf(object)) {
        failed++;
        console.error(`${overlay}: ${object.kind}/${object.metadata?.name}: ${problem}`);
      }
    }
    console.log(`deploy/kubernetes/overlays/${overlay}: ${objects.length} objects rendered and validated`);
  }
  process.exit(failed ? 1 : 0);
}

await main();
