// The agent learns the outcome: time from the approve call's response to the agent knowing it, through the held
// wait (GET /actions/{id}?wait=S) and through the agent's event stream (GET /agent/events), p50 and p99; and the
// memory a gateway process spends per 1,000 open held waits. In processes mode the agent talks to one gateway
// and the holder approves through another, so the outcome crosses NATS between replicas.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createInProcessBus, handle } from '@agent-auth/bus';
import { loadConfig } from '@agent-auth/config';
import { createLogger } from '@agent-auth/logging';
import { actionsEndpoints, type ActionView } from '@agent-auth/contracts';
import { createGateway } from '../../services/gateway/index.js';
import { createWaitRegistry, holdWhilePending } from '../../services/gateway/use-cases/held-waits.js';
import { apiClient } from '../harness/http.js';
import { openEventStream } from '../harness/sse.js';
import { startStack, type StackMode } from '../harness/stack.js';
import { out, withDatabase, type BenchCase } from './load.js';
import { notificationTable, type NotificationFigures } from './notification-latency.js';

// How long after sending the held request the holder approves. The wait must be in place by then (the case is an
// agent already waiting when the holder taps approve): at 32 at a time on a loaded machine, a request sent 30 ms
// earlier may still be in admission or its first read, and the figure would be that request's own latency.
const PARK_MS = Number(process.env.BENCH_OUTCOME_PARK_MS ?? 30);
const MODES = (process.env.BENCH_OUTCOME_MODES ?? 'processes,all-in-one').split(',').map((m) => m.trim());

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function figures(name: string, samples: number[]): NotificationFigures {
  const sorted = samples.map((s) => Math.max(0, s)).sort((a, b) => a - b);
  return {
    name,
    count: samples.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1)!,
    early: samples.filter((s) => s < 0).length,
  };
}

async function inParallel(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resident memory of a process in bytes (Linux). */
function rssOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Number(line.replace(/\D+/g, '')) * 1024;
}

interface MemoryFigure {
  name: string;
  waits: number;
  bytesPer1000: number;
}

/** One stack: latency at each concurrency through both paths, then the memory of `openWaits` held waits. */
async function outcomeLatency(
  mode: StackMode,
  databaseUrl: string,
  natsUrl: string | null,
  label: string,
  count: number,
  concurrencies: number[],
  openWaits: number,
) {
  const stack = await startStack({
    mode,
    databaseUrl,
    natsUrl,
    name: 'bench-outcome',
    env: {
      LOG_REQUESTS: 'false',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
      DB_POOL_SIZE: '10',
      // Rate limits stay on (a held wait counts once, at the highest limits allowed); each part of the case uses
      // an account of its own, so that no key or device makes 10,000 requests within a minute.
      RATE_LIMIT_AGENT: '10000',
      RATE_LIMIT_DEVICE: '10000',
    },
  });
  try {
    const agentUrl = mode === 'processes' ? await stack.addGateway() : stack.baseUrl;
    const holder = apiClient(stack.baseUrl);
    let acct = await holder.newAccount();
    let device = holder.device(acct.device_id);
    const freshAccount = async () => {
      acct = await holder.newAccount();
      device = holder.device(acct.device_id);
    };
    const create = async () => {
      const r = await holder
        .agent(acct.api_key)
        .post('/actions', { action_type: 'purchase', title: 'Bench purchase', amount: 5 });
      if (r.status !== 200 || r.body.status !== 'pending')
        throw new Error(`create failed: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.id as string;
    };
    const approve = async (id: string) => {
      const r = await device.post(`/actions/${id}/approve`);
      if (r.status !== 200) throw new Error(`approve failed: ${r.status}`);
      return performance.now();
    };
    const heldGet = async (id: string, seconds: number, apiKey = acct.api_key) => {
      // fetch opens as many connections as there are requests in flight: one per held wait.
      const res = await fetch(`${agentUrl}/actions/${id}?wait=${seconds}`, { headers: { 'x-api-key': apiKey } });
      const body = (await res.json()) as ActionView;
      return { at: performance.now(), body };
    };

    const rows: NotificationFigures[] = [];
    for (const concurrency of concurrencies) {
      await freshAccount();
      // Held wait: the agent's request is in place (a moment after it was sent) when the holder approves.
      const held: number[] = [];
      await inParallel(count, concurrency, async () => {
        const id = await create();
        const waiting = heldGet(id, 30);
        await sleep(PARK_MS);
        const approved = await approve(id);
        const answer = await waiting;
        if (answer.body.status !== 'approved') throw new Error(`held wait answered ${answer.body.status}`);
        held.push(answer.at - approved);
      });
      rows.push(figures(`${label}, ${concurrency} at a time: approve → held wait`, held));

      // Event stream: one stream of the agent, open throughout.
      await freshAccount();
      const stream = await openEventStream(`${agentUrl}/agent/events`, { 'x-api-key': acct.api_key });
      const streamed: number[] = [];
      await inParallel(count, concurrency, async () => {
        const id = await create();
        const approved = await approve(id);
        const seen = await stream.next((e) => e.data.id === id);
        streamed.push(seen.at - approved);
      });
      stream.close();
      rows.push(figures(`${label}, ${concurrency} at a time: approve → agent stream`, streamed));
    }

    // Memory: the gateway the agent talks to, before and with `openWaits` held waits open.
    // Each account makes half the requests, so that no key passes its rate limit.
    const gateway = mode === 'processes' ? stack.processes('gateway').at(-1)! : stack.processes('all-in-one')[0]!;
    const ids: Array<[string, string]> = [];
    for (const share of [Math.ceil(openWaits / 2), Math.floor(openWaits / 2)]) {
      await freshAccount();
      await inParallel(share, 32, async () => void ids.push([await create(), acct.api_key]));
    }
    await inParallel(200, 32, async (i) => void (await heldGet(ids[i]![0], 1, ids[i]![1]))); // warm the held-wait path
    await sleep(1000);
    const before = rssOf(gateway.pid!);
    const open = ids.map(([id, key]) => heldGet(id, 60, key).catch(() => null));
    await sleep(Math.max(3000, openWaits)); // every request has reached the gateway and is held
    const during = rssOf(gateway.pid!);
    const memory: MemoryFigure = {
      name: `${label}: gateway process RSS`,
      waits: openWaits,
      bytesPer1000: ((during - before) / openWaits) * 1000,
    };
    await stack.stop(); // shutdown answers every held wait at once
    await Promise.all(open);
    return { rows, memory };
  } finally {
    await stack.stop();
  }
}

/** The wait registry alone (one shared subscription, a waiter per held request): heap per 1,000 waits. */
export async function registryMemory(waits: number): Promise<MemoryFigure> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const bus = createInProcessBus({ prefix: 'bench', timeoutMs: 1000 });
  const registry = createWaitRegistry(bus.actionEvents);
  await registry.start();
  const pending = {
    id: 'act_x',
    status: 'pending',
    expires_at: new Date(Date.now() + 3600_000).toISOString(),
  } as ActionView;
  gc();
  const before = process.memoryUsage().heapUsed;
  const held = Array.from({ length: waits }, (_, i) =>
    holdWhilePending({
      registry,
      requestId: `act_${i}`,
      seconds: 60,
      read: async () => pending,
      onClientGone: () => {},
    }),
  );
  await sleep(100);
  gc();
  const during = process.memoryUsage().heapUsed;
  registry.stop();
  await Promise.all(held);
  return {
    name: 'wait registry alone (heap: waiter, its timer and promise)',
    waits,
    bytesPer1000: ((during - before) / waits) * 1000,
  };
}

/** Opens `count` held requests from another process (its sockets are not ours) and keeps them open until killed. */
const OPENER = `
const [url, key, count] = process.argv.slice(1);
const http = require('node:http');
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
let answered = 0;
for (let i = 0; i < Number(count); i++) {
  http.get(url + '/actions/act_' + i + '?wait=60', { agent, headers: { 'x-api-key': key } }, (res) => {
    res.resume();
    res.on('end', () => { if (++answered === Number(count)) process.exit(0); });
  }).on('error', () => {});
}
`;

/**
 * The gateway alone, in this process: the full HTTP path of a held wait (fastify, admission, the registry, the
 * socket) against an in-process stand-in for the actions service that keeps every request pending. The held
 * requests come from another process, so this process's heap after a full GC is the gateway's own cost.
 */
export async function gatewayHeapPerWait(waits: number): Promise<MemoryFigure> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const bus = createInProcessBus({ prefix: 'bench-heap', timeoutMs: 5000 });
  const principal = { account_id: 'acc_bench', agent_id: 'agt_bench' };
  const expires = new Date(Date.now() + 3600_000).toISOString();
  const now = new Date().toISOString();
  const view = (id: string): ActionView => ({
    id,
    agent_id: principal.agent_id,
    status: 'pending',
    action_type: 'purchase',
    title: 'Bench purchase',
    description: null,
    risk_level: 'medium',
    reversible: true,
    amount: 5,
    amount_cents: 500,
    currency: 'USD',
    recipient: null,
    metadata: {},
    callback_url: null,
    content_hash: null,
    rule_applied: null,
    resolved_by: null,
    resolved_at: null,
    reason: null,
    created_at: now,
    expires_at: expires,
  });
  const log = createLogger({ service: 'bench-gateway', level: 'silent' });
  let reads = 0; // each held request reads its action once when it arrives
  const served = await bus.serve({
    name: 'actions',
    version: '0.0.0',
    description: 'bench stand-in',
    concurrency: 10_000,
    log,
    handlers: [
      handle(actionsEndpoints.authenticateAgent, async () => principal),
      handle(actionsEndpoints.get, async ({ id }) => {
        reads++;
        return view(id);
      }),
    ],
  });
  const app = await createGateway({ bus, config: { ...loadConfig({}), RATE_LIMITS: false, LOG_REQUESTS: false }, log });
  const url = `${await app.listen({ host: '127.0.0.1', port: 0 })}/api/v1`;
  try {
    // Warm the path once so that compiled code and pools are in the baseline.
    const warm = spawn(process.execPath, ['-e', OPENER, url, 'aa_bench', '50'], { stdio: 'ignore' });
    await sleep(1500);
    warm.kill();
    await sleep(500);
    gc();
    const before = process.memoryUsage().heapUsed;
    reads = 0;
    const opener = spawn(process.execPath, ['-e', OPENER, url, 'aa_bench', String(waits)], { stdio: 'ignore' });
    for (let i = 0; i < 600 && reads < waits; i++) await sleep(100);
    if (reads < waits) throw new Error(`only ${reads} of ${waits} held requests arrived`);
    await sleep(500);
    gc();
    const during = process.memoryUsage().heapUsed;
    opener.kill();
    return {
      name: 'gateway alone, in process (heap after GC: HTTP, admission, registry)',
      waits,
      bytesPer1000: ((during - before) / waits) * 1000,
    };
  } finally {
    await app.close();
    await served.stop();
    await bus.close();
  }
}

export const agentOutcomeBench: BenchCase = {
  name: 'outcome',
  description:
    'from the approve response to the agent knowing the outcome: held wait and agent event stream; memory of open held waits',
  async run(infra) {
    const count = Number(process.env.BENCH_OUTCOME_REQUESTS ?? 1000);
    const concurrencies = (process.env.BENCH_OUTCOME_CONCURRENCY ?? '1,32').split(',').map(Number);
    const openWaits = Number(process.env.BENCH_OPEN_WAITS ?? 5000);
    out(
      `${count} requests at each concurrency (${concurrencies.join(', ')}); ${openWaits} held waits open for the memory figure`,
    );
    out('Polling every 2 s, the agent learned the outcome 0-2 s after the approve (a fresh clone measured 2,156 ms).');
    const results: Array<{ rows: NotificationFigures[]; memory: MemoryFigure }> = [];
    if (infra.natsUrl && MODES.includes('processes'))
      results.push(
        await withDatabase(infra, (url) =>
          outcomeLatency('processes', url, infra.natsUrl, '(b) processes, 2 gateways', count, concurrencies, openWaits),
        ),
      );
    if (MODES.includes('all-in-one'))
      results.push(
        await withDatabase(infra, (url) =>
          outcomeLatency('all-in-one', url, null, '(a) all-in-one', count, concurrencies, openWaits),
        ),
      );
    notificationTable(
      results.flatMap((r) => r.rows),
      out,
    );
    out();
    const memory = [
      ...results.map((r) => r.memory),
      await gatewayHeapPerWait(openWaits),
      await registryMemory(100_000),
    ];
    for (const m of memory)
      out(
        `${m.name.padEnd(62)} ${String(m.waits).padStart(7)} waits: ${(m.bytesPer1000 / 1024 / 1024).toFixed(2)} MiB per 1,000 open waits`,
      );
  },
};
