// Bench case: a vault execution round trip (POST /vault/execute through the gateway, the bus, the executor with
// its checks, credential decryption and injection, and the pinned outbound client) against a direct undici call
// to the same loopback HTTPS upstream, at the same concurrency. The upstream runs in a process of its own, as an
// agent's upstream is never in the agent's process: the yardstick is a call that crosses to another process once
// each way. A direct call whose client and upstream share one event loop is printed beside it, as it was measured
// before (it crosses no process, so it is cheaper than any call an agent can make).
import { performance } from 'node:perf_hooks';
import { Agent } from 'undici';
import { apiClient } from '../harness/http.js';
import { cpuProbe, printCpuPerRequest, processGroups } from './cpu.js';
import { startStack, type StackMode } from '../harness/stack.js';
import { selfSignedCert, startUpstream, trustFile } from '../harness/upstream.js';
import { out, withDatabase, type BenchCase } from './load.js';
import { startUpstreamServer } from './reference.js';

export interface LatencyFigures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  failures: number;
}

/** Runs `count` calls with `concurrency` in flight; per-call latency percentiles and overall throughput. */
async function measure(
  name: string,
  count: number,
  concurrency: number,
  call: (i: number) => Promise<boolean>,
  /** A pause before each call, not timed. */
  pauseMs = 0,
): Promise<LatencyFigures> {
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        if (pauseMs) await new Promise((resolve) => setTimeout(resolve, pauseMs));
        const t = performance.now();
        if (!(await call(i))) failures++;
        latencies.push(performance.now() - t);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;
  return { name, rps: count / elapsed, p50: pct(50), p99: pct(99), failures };
}

/** The yardstick (upstream in its own process), the same-loop direct call, and the vault execution. */
export interface VaultFigures {
  direct: LatencyFigures;
  directSameLoop: LatencyFigures;
  /** At 1 in flight: the direct call after the upstream (and the client) idled IDLE_GAP_MS, as between turns. */
  directAfterIdle: LatencyFigures | null;
  vault: LatencyFigures;
}

/**
 * The pause before each direct call of the idle-gap yardstick: about as long as each process of a vault execution
 * over NATS sits idle between its turns. Back to back, a call finds the upstream's process running; after a pause its
 * process (and its CPU) must wake first: on the bench's VM that doubled the call (0.36 → 0.72 ms at p50).
 */
const IDLE_GAP_MS = 6;

/** Direct undici calls and vault executions of the same GET against one loopback HTTPS upstream. */
export async function vaultExecution(options: {
  mode: StackMode;
  databaseUrl: string;
  natsUrl: string | null;
  calls: number;
  concurrency: number;
}): Promise<VaultFigures> {
  const cert = selfSignedCert();
  const caFile = trustFile(cert);
  const body = JSON.stringify({ id: 42, name: 'thing', tags: ['a', 'b'] });
  const sameLoop = await startUpstream({
    tls: cert,
    handler: (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body),
  });
  const upstreamServer = await startUpstreamServer(cert);
  const upstream = { origin: upstreamServer.url };
  const stopUpstreams = async () => {
    await upstreamServer.stop();
    await sameLoop.close();
  };
  const stack = await startStack({
    mode: options.mode,
    databaseUrl: options.databaseUrl,
    natsUrl: options.natsUrl,
    name: 'bench-vault',
    env: {
      LOG_REQUESTS: 'false',
      ALLOW_INSECURE_HOSTS: '127.0.0.1',
      VAULT_EXTRA_CA_CERTS: caFile,
      // The services' default pool, as in every other case (the test harness runs with 4): with 4 connections
      // shared by every service of the process, 8 executions in flight queued for a connection behind each other's
      // claims, whose commits wait for the WAL flush, and behind the workers.
      DB_POOL_SIZE: process.env.BENCH_VAULT_POOL ?? '10',
    },
  }).catch(async (err: unknown) => {
    await stopUpstreams();
    throw err;
  });
  const direct = new Agent({ connect: { ca: cert.cert } });
  try {
    const api = apiClient(stack.baseUrl);
    const acct = await api.newAccount();
    await api.device(acct.device_id).post('/account/plan', { plan: 'unlimited' });
    await api.device(acct.device_id).post('/vault/credentials', {
      service_name: 'bench',
      credential_value: 'bench-secret-value',
      allowed_hosts: ['127.0.0.1'],
    });
    const url = `${upstream.origin}/things/42`;
    // Every execution needs its own approved request: prepare them all before timing.
    const ids: string[] = [];
    await measure('prepare', options.calls + warmCalls, 8, async () => {
      const created = await api.agent(acct.api_key).post('/actions', {
        action_type: 'system',
        title: 'bench call',
        metadata: { vault_execute: true, service_name: 'bench', method: 'GET', url },
      });
      const approved = await api
        .device(acct.device_id)
        .post(`/actions/${created.body.id}/approve`, { content_hash: created.body.content_hash });
      if (approved.status === 200) ids.push(created.body.id);
      return approved.status === 200;
    });
    const directCall = (origin: string) => async () => {
      const res = await direct.request({ origin, path: '/things/42', method: 'GET' });
      await res.body.text();
      return res.statusCode === 200;
    };
    await measure('warm-up', 200, options.concurrency, directCall(sameLoop.origin));
    const directSameLoop = await measure(
      `direct call, upstream in the client's process`,
      ids.length,
      options.concurrency,
      directCall(sameLoop.origin),
    );
    await measure('warm-up', 200, options.concurrency, directCall(upstream.origin));
    const directFigures = await measure(
      `direct call, upstream in its own process`,
      ids.length,
      options.concurrency,
      directCall(upstream.origin),
    );
    const directAfterIdle =
      options.concurrency === 1
        ? await measure(
            `direct call, each after ${IDLE_GAP_MS} ms idle`,
            Math.min(ids.length, 300),
            1,
            directCall(upstream.origin),
            IDLE_GAP_MS,
          )
        : null;
    // The executor's first calls open its TLS connection to the upstream and warm its code paths: not timed. Code that
    // runs once per execution reaches V8's optimizing tier only after hundreds of them: with 40 untimed, the process
    // spent 3.9 ms of CPU per execution at 1 in flight, with 600 3.2 ms, with 1,500 2.7 ms.
    const warmIds = ids.splice(0, warmCalls);
    await measure(
      'vault warm-up',
      warmIds.length,
      options.concurrency,
      async (i) => (await api.agent(acct.api_key).post(`/vault/execute/${warmIds[i]}`)).status === 200,
    );
    const groups = processGroups(stack, options.databaseUrl);
    groups.set('upstream', () => [upstreamServer.pid]);
    const cpu = cpuProbe(groups);
    const benchCpu = process.cpuUsage();
    cpu.start();
    const viaVault = await measure(
      `vault execution (${options.mode}, ${options.concurrency} in flight)`,
      ids.length,
      options.concurrency,
      async (i) => {
        const res = await api.agent(acct.api_key).post(`/vault/execute/${ids[i]}`);
        return res.status === 200 && res.body.status_code === 200;
      },
    );
    const used = cpu.stop();
    // The bench process is the agent's HTTP client here (and reads the stack's logs).
    const own = process.cpuUsage(benchCpu);
    used.set('bench (the client)', (own.user + own.system) / 1000);
    printCpuPerRequest(`vault execution (${options.mode}, ${options.concurrency} in flight)`, used, ids.length);
    return { direct: directFigures, directSameLoop, directAfterIdle, vault: viaVault };
  } finally {
    await direct.close();
    await stack.stop();
    await stopUpstreams();
  }
}

const vaultCalls = Number(process.env.BENCH_VAULT_CALLS ?? 400);
/** Untimed executions first (each needs its own approved request, prepared with the timed ones). */
const warmCalls = Number(process.env.BENCH_VAULT_WARM_CALLS ?? 600);
// One in flight is an agent's own latency; eight in flight load the machine (CPU per execution decides it).
const vaultConcurrencies = (process.env.BENCH_VAULT_CONCURRENCY ?? '1,8').split(',').map(Number);

function latencyTable(rows: LatencyFigures[]): void {
  out(
    `${'case'.padEnd(52)} ${'calls/s'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'failed'.padStart(8)}`,
  );
  for (const r of rows) {
    out(
      `${r.name.padEnd(52)} ${r.rps.toFixed(0).padStart(9)} ${r.p50.toFixed(2).padStart(8)} ${r.p99.toFixed(2).padStart(8)} ${String(r.failures).padStart(8)}`,
    );
  }
}

/** Vault execution round trip vs a direct undici call to the same loopback upstream, in each available mode. */
export const vaultBench: BenchCase = {
  name: 'vault',
  description: `vault execution round trip vs direct undici call, same loopback HTTPS upstream in its own process, ${vaultCalls} calls at ${vaultConcurrencies.join(' and ')} in flight`,
  async run(infra) {
    const modes: StackMode[] = infra.natsUrl ? ['all-in-one', 'processes'] : ['all-in-one'];
    for (const mode of modes) {
      for (const concurrency of vaultConcurrencies) {
        const { direct, directSameLoop, directAfterIdle, vault } = await withDatabase(infra, (databaseUrl) =>
          vaultExecution({ mode, databaseUrl, natsUrl: infra.natsUrl, calls: vaultCalls, concurrency }),
        );
        latencyTable([directSameLoop, direct, ...(directAfterIdle ? [directAfterIdle] : []), vault]);
        const bound = 2 * direct.p50 + 5;
        out(
          `ratio vault/direct (${mode}, ${concurrency} in flight): p50 latency ${(vault.p50 / direct.p50).toFixed(1)}x, p99 latency ${(vault.p99 / direct.p99).toFixed(1)}x, throughput ${(vault.rps / direct.rps).toFixed(3)}; p50 ${vault.p50.toFixed(2)} ms against 2 x direct + 5 ms = ${bound.toFixed(2)} ms: ${vault.p50 <= bound ? 'within' : 'over'} (against the same-loop direct call: ${(2 * directSameLoop.p50 + 5).toFixed(2)} ms, ${vault.p50 <= 2 * directSameLoop.p50 + 5 ? 'within' : 'over'})${directAfterIdle ? `; against the call after ${IDLE_GAP_MS} ms idle: ${(2 * directAfterIdle.p50 + 5).toFixed(2)} ms, ${vault.p50 <= 2 * directAfterIdle.p50 + 5 ? 'within' : 'over'} (not the goal's yardstick)` : ''}`,
        );
      }
    }
  },
};
