#!/usr/bin/env node
// `npm run chaos`: the chaos suite at full scale (service replicas killed, NATS and Postgres restarted);
// `npm run chaos -- --cluster`: the NATS cluster's (a node of three killed -9 under load, then another).
import { spawnSync } from 'node:child_process';

const file = process.argv.includes('--cluster') ? 'test/e2e/chaos-cluster.e2e.test.ts' : 'test/e2e/chaos.e2e.test.ts';
const run = spawnSync('npx', ['vitest', 'run', file], {
  stdio: 'inherit',
  env: { ...process.env, CHAOS_SCALE: 'full' },
});
process.exit(run.status ?? 1);
