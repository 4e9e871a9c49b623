import { execFileSync } from 'node:child_process';
import type { TestProject } from 'vitest/node';
import { resolveInfra } from './resolve.js';

declare module 'vitest' {
  export interface ProvidedContext {
    infra: { databaseUrl: string; isolatedDatabases: boolean; natsUrl: string | null };
  }
}

/** Builds the services (end-to-end tests run them as processes from dist/) and finds Postgres and NATS once per run. */
export default async function setup(project: TestProject) {
  execFileSync('npx', ['tsc', '-b'], { stdio: 'inherit' });
  const infra = await resolveInfra();
  process.stdout.write(`\nTest infrastructure:\n${infra.notes.map((n) => `  - ${n}`).join('\n')}\n\n`);
  project.provide('infra', {
    databaseUrl: infra.databaseUrl,
    isolatedDatabases: infra.isolatedDatabases,
    natsUrl: infra.natsUrl,
  });
  return () => infra.stop();
}
