// What the Kubernetes manifests promise beyond their schemas (bin/check-manifests.mjs checks those in `npm run lint`),
// on what `kubectl kustomize` renders of each overlay: every service probed for readiness on /readyz, scaled by a
// HorizontalPodAutoscaler and kept up by a PodDisruptionBudget; NATS three servers with JetStream that every service
// is given; internet egress for the vault executor alone (it relays the other services' calls); secrets only by
// reference.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const ROOT = resolve(import.meta.dirname, '../..');
const SERVICES = ['gateway', 'actions', 'policy', 'notifier', 'vault-executor', 'identity'];
const kubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;

/** A rendered Kubernetes object, read field by field. */
type K8sObject = any;

function render(overlay: string): K8sObject[] {
  const text = execFileSync('kubectl', ['kustomize', join(ROOT, 'deploy/kubernetes/overlays', overlay)], {
    encoding: 'utf8',
  });
  return parseAllDocuments(text).map((doc) => doc.toJS());
}

const matches = (selector: Record<string, string> | undefined, labels: Record<string, string>) =>
  Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);

/** Whether a NetworkPolicy's podSelector picks a pod with these labels. */
function selects(policy: K8sObject, labels: Record<string, string>): boolean {
  const { matchLabels, matchExpressions = [] } = policy.spec.podSelector;
  return (
    matches(matchLabels, labels) &&
    matchExpressions.every((e: { key: string; operator: string; values: string[] }) =>
      e.operator === 'In' ? e.values.includes(labels[e.key]!) : true,
    )
  );
}

/** The egress rules of the policies that pick the pod which reach an address outside the cluster. */
function internetRules(policies: K8sObject[], labels: Record<string, string>): K8sObject[] {
  return policies
    .filter((p) => p.spec.policyTypes.includes('Egress') && selects(p, labels))
    .flatMap((p) =>
      (p.spec.egress ?? []).filter((rule: K8sObject) => (rule.to ?? []).some((to: K8sObject) => to.ipBlock)),
    );
}

describe.skipIf(!kubectl)(`deploy/kubernetes overlays${kubectl ? '' : ' (skipped: no kubectl)'}`, () => {
  for (const overlay of ['development', 'production']) {
    describe(overlay, () => {
      const objects = render(overlay);
      const of = (kind: string) => objects.filter((o) => o.kind === kind);
      const named = (kind: string, name: string) => of(kind).find((o) => o.metadata.name === name);

      it('has a Deployment of every service, ready on /readyz, scaled by an autoscaler and kept up by a budget', () => {
        for (const service of SERVICES) {
          const deployment = named('Deployment', service);
          expect(deployment, service).toBeDefined();
          const container = deployment.spec.template.spec.containers[0];
          expect(container.readinessProbe.httpGet.path, service).toBe('/readyz');
          const port = container.ports.find((p: K8sObject) => p.name === container.readinessProbe.httpGet.port);
          expect(port, `${service}: the probe's port is declared`).toBeDefined();
          // The autoscaler owns the replica count.
          expect(deployment.spec.replicas, service).toBeUndefined();
          const hpa = named('HorizontalPodAutoscaler', service);
          expect(hpa.spec.scaleTargetRef, service).toEqual({
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            name: service,
          });
          expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
          expect(container.resources.requests.cpu, `${service}: utilization needs a CPU request`).toBeDefined();
          const pdb = named('PodDisruptionBudget', service);
          expect(matches(pdb.spec.selector.matchLabels, deployment.spec.template.metadata.labels), service).toBe(true);
          // A budget that allows no disruption at the autoscaler's minimum would block every node drain.
          const allowed = pdb.spec.maxUnavailable ?? hpa.spec.minReplicas - pdb.spec.minAvailable;
          expect(allowed, service).toBeGreaterThanOrEqual(1);
        }
      });

      it('runs NATS as three servers with JetStream, each of which every service is given', () => {
        const nats = named('StatefulSet', 'nats');
        expect(nats.spec.replicas).toBe(3);
        const conf = named('ConfigMap', 'nats-config').data['nats.conf'] as string;
        expect(conf).toMatch(/jetstream \{/);
        for (const i of [0, 1, 2]) expect(conf).toContain(`nats://nats-${i}.nats-headless:6222`);
        const settings = named('ConfigMap', 'agent-auth-config').data;
        expect(settings.NATS_URL.split(',')).toEqual([0, 1, 2].map((i) => `nats://nats-${i}.nats-headless:4222`));
        expect(settings.NATS_STREAM_REPLICAS).toBe('3');
        expect(named('PodDisruptionBudget', 'nats').spec.maxUnavailable).toBe(1);
      });

      it.skipIf(spawnSync('nats-server', ['--version'], { stdio: 'ignore' }).status !== 0)(
        "has a NATS configuration nats-server accepts, with each pod's settings",
        () => {
          const dir = mkdtempSync(join(tmpdir(), 'aa-nats-conf-'));
          const file = join(dir, 'nats.conf');
          writeFileSync(file, named('ConfigMap', 'nats-config').data['nats.conf']);
          const env = named('StatefulSet', 'nats').spec.template.spec.containers[0].env as K8sObject[];
          const values = Object.fromEntries(env.filter((e) => e.value).map((e) => [e.name, e.value]));
          const test = spawnSync('nats-server', ['-t', '-c', file], {
            env: { ...process.env, ...values, POD_NAME: 'nats-0' },
            encoding: 'utf8',
          });
          expect(test.status, `${test.stdout}${test.stderr}`).toBe(0);
          expect(test.stdout + test.stderr).toMatch(/is valid|test is successful/);
        },
      );

      it('lets the vault executor, and no other pod, reach the internet, never its private ranges', () => {
        const policies = of('NetworkPolicy');
        const denyAll = policies.find((p) => p.metadata.name === 'default-deny-egress');
        expect(denyAll.spec.podSelector).toEqual({});
        const pods = [...of('Deployment'), ...of('StatefulSet')].map((w) => ({
          name: w.metadata.name as string,
          labels: w.spec.template.metadata.labels as Record<string, string>,
        }));
        const outbound = pods.filter((p) => internetRules(policies, p.labels).length);
        expect(outbound.map((p) => p.name)).toEqual(['vault-executor']);
        // The services whose calls it relays are not told to make them themselves.
        for (const config of of('ConfigMap'))
          expect(config.data?.OUTBOUND_VIA ?? 'vault-executor').toBe('vault-executor');
        for (const relayed of ['notifier', 'identity']) {
          const env = named('Deployment', relayed).spec.template.spec.containers[0].env ?? [];
          expect(env.find((e: K8sObject) => e.name === 'OUTBOUND_VIA')?.value ?? 'vault-executor').toBe(
            'vault-executor',
          );
        }
        // The private, link-local and loopback ranges stay out of reach.
        const ranges = internetRules(policies, outbound[0]!.labels).flatMap((rule) =>
          rule.to.map((to: K8sObject) => to.ipBlock),
        );
        for (const block of ranges)
          expect(block.except).toEqual(
            expect.arrayContaining(
              block.cidr === '::/0' ? ['fc00::/7', 'fe80::/10'] : ['10.0.0.0/8', '169.254.0.0/16'],
            ),
          );
      });

      it('refers to secrets by name and holds none, each given only to the services that use it', () => {
        expect(of('Secret')).toEqual([]);
        const secretsOf = (service: string) => {
          const env = named('Deployment', service).spec.template.spec.containers[0].env as K8sObject[];
          for (const e of env)
            expect(e.value ?? '', `${service} ${e.name}`).not.toMatch(/:\/\/.*@|^[a-z0-9]+:[A-Za-z0-9+/]{20,}/);
          return new Set(env.flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.name] : [])));
        };
        expect(SERVICES.filter((s) => secretsOf(s).has('agent-auth-vault'))).toEqual(['vault-executor']);
        expect(SERVICES.filter((s) => secretsOf(s).has('agent-auth-receipts'))).toEqual(['actions']);
        const settings = named('ConfigMap', 'agent-auth-config').data as Record<string, string>;
        for (const key of ['DATABASE_URL', 'ACTIONS_KEYS', 'VAULT_KEYS', 'RECEIPT_KEYS'])
          expect(settings[key]).toBeUndefined();
      });
    });
  }
});
