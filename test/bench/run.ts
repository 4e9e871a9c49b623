// npm run bench: action creation through the gateway at a steady concurrency, for the all-in-one process
// (in-process bus) and for separate service processes over NATS, side by side, with their ratio.
// Both run against the same real Postgres. Settings: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 32).
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { resolveInfra } from '../infra/resolve.js';
import { apiClient } from '../harness/http.js';
import { startStack, type StackMode } from '../harness/stack.js';
import { vaultExecution, type LatencyFigures } from './vault-execution.js';
import { notificationLatency, notificationTable, type NotificationFigures } from './notification-latency.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const out = (line = '') => process.stdout.write(line + '\n');
// BENCH_CASES picks cases: create (action creation throughput), vault (execution round trip), notify (webhook and device stream latency).
const cases = new Set((process.env.BENCH_CASES ?? 'create,vault,notify').split(',').map((c) => c.trim()));

interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

async function withDatabase<T>(adminUrl: string, isolated: boolean, use: (url: string) => Promise<T>): Promise<T> {
  if (!isolated) return use(adminUrl);
  const name = `aa_bench_${randomBytes(4).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  try {
    return await use(url.toString());
  } finally {
    await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin.end();
  }
}

async function load(name: string, url: string, headers: Record<string, string>, body: unknown): Promise<Figures> {
  const run = (duration: number) =>
    autocannon({ url, method: 'POST', connections, duration, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  await run(2); // warm-up: JIT, connection pools, the auth cache
  const result = await run(seconds);
  return { name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, errors: result.errors };
}

/** One bench case: a stack in a mode, prepared by `setup`, loaded with action creations. */
async function actionCreation(mode: StackMode, infra: Awaited<ReturnType<typeof resolveInfra>>, label: string): Promise<Figures> {
  return withDatabase(infra.databaseUrl, infra.isolatedDatabases, async (databaseUrl) => {
    const stack = await startStack({ mode, databaseUrl, natsUrl: infra.natsUrl, name: 'bench', env: { LOG_REQUESTS: 'false', DB_POOL_SIZE: '10' } });
    try {
      const account = await apiClient(stack.baseUrl).newAccount();
      return await load(label, `${stack.baseUrl}/actions`, { 'x-api-key': account.api_key }, { action_type: 'purchase', title: 'Bench purchase', amount: 9.99, metadata: { order: 'bench' } });
    } finally {
      await stack.stop();
    }
  });
}

function table(rows: Figures[]): void {
  out(`${'case'.padEnd(44)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'non-2xx'.padStart(8)}`);
  for (const r of rows) {
    out(`${r.name.padEnd(44)} ${r.rps.toFixed(0).padStart(9)} ${r.p50.toFixed(1).padStart(8)} ${r.p99.toFixed(1).padStart(8)} ${String(r.non2xx + r.errors).padStart(8)}`);
  }
}

const vaultCalls = Number(process.env.BENCH_VAULT_CALLS ?? 400);
const vaultConcurrency = Number(process.env.BENCH_VAULT_CONCURRENCY ?? 8);

/** Vault execution round trip vs a direct undici call to the same loopback upstream, in each available mode. */
async function vaultBench(): Promise<void> {
  out(`\nBenchmark: vault execution round trip vs direct undici call, same loopback HTTPS upstream, ${vaultCalls} calls, ${vaultConcurrency} in flight`);
  const modes: StackMode[] = infra.natsUrl ? ['all-in-one', 'processes'] : ['all-in-one'];
  for (const mode of modes) {
    const [direct, vault] = await withDatabase(infra.databaseUrl, infra.isolatedDatabases, (databaseUrl) =>
      vaultExecution({ mode, databaseUrl, natsUrl: infra.natsUrl, calls: vaultCalls, concurrency: vaultConcurrency }));
    latencyTable([direct, vault]);
    out(`ratio vault/direct (${mode}): p50 latency ${(vault.p50 / direct.p50).toFixed(1)}x, p99 latency ${(vault.p99 / direct.p99).toFixed(1)}x, throughput ${(vault.rps / direct.rps).toFixed(3)}`);
  }
}

function latencyTable(rows: LatencyFigures[]): void {
  out(`${'case'.padEnd(44)} ${'calls/s'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'failed'.padStart(8)}`);
  for (const r of rows) {
    out(`${r.name.padEnd(44)} ${r.rps.toFixed(0).padStart(9)} ${r.p50.toFixed(2).padStart(8)} ${r.p99.toFixed(2).padStart(8)} ${String(r.failures).padStart(8)}`);
  }
}

const infra = await resolveInfra();
out(`Benchmark: POST /actions, ${connections} connections, ${seconds} s per case (after a 2 s warm-up), per-request access logs off`);
for (const note of infra.notes) out(`  ${note}`);
out();
try {
  if (cases.has('create')) {
    const rows: Figures[] = [];
    rows.push(await actionCreation('all-in-one', infra, '(a) all-in-one (in-process bus)'));
    if (infra.natsUrl) rows.push(await actionCreation('processes', infra, '(b) gateway + actions processes over NATS'));
    table(rows);
    const [a, b] = rows;
    if (a && b) out(`\nratio (b)/(a): throughput ${(b.rps / a.rps).toFixed(2)}, p50 latency ${(b.p50 / a.p50).toFixed(2)}, p99 latency ${(b.p99 / a.p99).toFixed(2)}`);
    else out('\n(b) skipped: no NATS server reachable');
  }
  if (cases.has('vault')) await vaultBench();
  if (cases.has('notify')) {
    const notifyCount = Number(process.env.BENCH_NOTIFY_REQUESTS ?? 1000);
    const notifyConcurrency = (process.env.BENCH_NOTIFY_CONCURRENCY ?? '1,8').split(',').map(Number);
    out(`\nNotification latency: ${notifyCount} requests at each concurrency (${notifyConcurrency.join(', ')}); from the HTTP response to the webhook's arrival at an HTTPS receiver on loopback / the device stream's event`);
    const latency: NotificationFigures[] = [];
    if (infra.natsUrl) latency.push(...(await withDatabase(infra.databaseUrl, infra.isolatedDatabases, (url) => notificationLatency('processes', url, infra.natsUrl, '(b) processes, JetStream', notifyCount, notifyConcurrency))));
    latency.push(...(await withDatabase(infra.databaseUrl, infra.isolatedDatabases, (url) => notificationLatency('all-in-one', url, null, '(a) all-in-one, in-process', notifyCount, notifyConcurrency))));
    notificationTable(latency, out);
  }
} finally {
  await infra.stop();
}
