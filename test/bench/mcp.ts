// Remote MCP: a `request_approval` tool call over POST /mcp (Streamable HTTP, an agent API key as bearer token)
// beside the same create over REST (POST /api/v1/actions), in the same run: both take turns (create, tool call; tool
// call, create) at 1 and 16 at a time, every request timed on its own; p50 and p99 and their ratio (goal: the tool
// call within 1.5x of the create). An auto_approve rule answers both at once, so each is one create and nothing waits.
// On the all-in-one process and on one process per service over NATS.
import { apiClient } from '../harness/http.js';
import { cpuProbe, printCpuPerRequest, processGroups } from './cpu.js';
import { type Stack, startStack, type StackMode } from '../harness/stack.js';
import { type BenchCase, type Figures, out, table, withDatabase, type Infra } from './load.js';
import { pacedClient } from './paced-client.js';

const SLICE_SECONDS = Number(process.env.BENCH_MCP_SLICE_SECONDS ?? 2);
// Four rounds: over two 2 s slices a side, one GC pause or commit stall landing in one slice moved the p99 ratio of
// the same code across the goal on a two-core machine; four halve what one such moment weighs.
const ROUNDS = Number(process.env.BENCH_MCP_ROUNDS ?? 4);
const CONCURRENCY = (process.env.BENCH_MCP_CONCURRENCY ?? '1,16').split(',').map(Number);
const MODES = (process.env.BENCH_MCP_MODES ?? 'all-in-one,processes').split(',').map((m) => m.trim());
const RATIO_GOAL = 1.5;

/** The request both sides make: a low-risk data read, which the rule below approves at creation. */
const ACTION = { action_type: 'data_access', title: 'Read the quarterly report', risk_level: 'low' };

let calls = 0;
const toolCall = () =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: ++calls,
    method: 'tools/call',
    params: { name: 'request_approval', arguments: ACTION },
  });

interface Side {
  label: string;
  path: string;
  body: () => string;
  headers: (apiKey: string) => Record<string, string>;
}

const SIDES: Side[] = [
  {
    label: 'POST /api/v1/actions',
    path: '/api/v1/actions',
    body: () => JSON.stringify(ACTION),
    headers: (apiKey) => ({ 'x-api-key': apiKey }),
  },
  {
    label: 'POST /mcp request_approval',
    path: '/mcp',
    body: toolCall,
    headers: (apiKey) => ({
      authorization: `Bearer ${apiKey}`,
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    }),
  },
];

const percentile = (sorted: Float64Array, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;

/** `concurrency` loops of one request after another for `seconds`; each request's latency in ms. */
async function closedLoop(origin: string, apiKey: string, side: Side, concurrency: number, seconds: number) {
  const client = pacedClient(origin, concurrency);
  const headers = side.headers(apiKey);
  const latencies: number[] = [];
  let failed = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const bytes = client.request(side.path, headers, side.body());
        const sent = performance.now();
        const status = await client.send(bytes).catch(() => 0);
        latencies.push(performance.now() - sent);
        if (status !== 200) failed++;
      }
    }),
  );
  client.close();
  return { latencies, failed };
}

interface Turns {
  origin: string;
  apiKey: string;
  label: string;
  /** CPU time of the stack's processes and of Postgres, counted per slice. */
  cpu: ReturnType<typeof cpuProbe>;
}

/** The two sides in turns (A B, B A, …) at one concurrency, after a warm-up slice of each. */
async function inTurns(turns: Turns, concurrency: number): Promise<Figures[]> {
  const { origin, apiKey, label, cpu } = turns;
  for (const side of SIDES) await closedLoop(origin, apiKey, side, concurrency, 1);
  const pooled = SIDES.map(() => ({
    latencies: [] as number[],
    failed: 0,
    seconds: 0,
    cpu: new Map<string, number>(),
  }));
  for (let round = 0; round < ROUNDS; round++) {
    for (const i of round % 2 === 0 ? [0, 1] : [1, 0]) {
      cpu.start();
      const run = await closedLoop(origin, apiKey, SIDES[i]!, concurrency, SLICE_SECONDS);
      for (const [name, ms] of cpu.stop()) pooled[i]!.cpu.set(name, (pooled[i]!.cpu.get(name) ?? 0) + ms);
      pooled[i]!.latencies.push(...run.latencies);
      pooled[i]!.failed += run.failed;
      pooled[i]!.seconds += SLICE_SECONDS;
    }
  }
  for (const [i, side] of SIDES.entries()) {
    const { cpu: used, latencies } = pooled[i]!;
    printCpuPerRequest(`${label}, ${concurrency} at a time, ${side.label}`, used, latencies.length);
  }
  return SIDES.map((side, i) => {
    const samples = Float64Array.from(pooled[i]!.latencies).sort();
    return {
      name: `${label}, ${concurrency} at a time: ${side.label}`,
      rps: samples.length / pooled[i]!.seconds,
      p50: percentile(samples, 50),
      p99: percentile(samples, 99),
      non2xx: pooled[i]!.failed,
      errors: 0,
      total: samples.length,
    };
  });
}

const mark = (ok: boolean) => (ok ? '✔' : '✘');

function printRatio(create: Figures, tool: Figures): void {
  const part = (name: string, f: (m: Figures) => number) => {
    const ratio = f(tool) / f(create);
    const added = f(tool) - f(create);
    return `${name} ${ratio.toFixed(2)} (${added >= 0 ? '+' : ''}${added.toFixed(2)} ms) ${mark(ratio <= RATIO_GOAL)}`;
  };
  out(
    `ratio ${tool.name.replace(/: .*/, '')} tool call / create: ${part('p50', (m) => m.p50)}, ${part('p99', (m) => m.p99)} (goal <= ${RATIO_GOAL}); throughput ${(tool.rps / create.rps).toFixed(2)}`,
  );
}

/** Both sides are what they claim: the rule approves the create, and the tool call answers the approved request. */
async function checkAnsweredAtOnce(origin: string, apiKey: string): Promise<void> {
  const post = (side: Side) =>
    fetch(`${origin}${side.path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...side.headers(apiKey) },
      body: side.body(),
    }).then((r) => r.json() as Promise<any>);
  const created = await post(SIDES[0]!);
  const called = await post(SIDES[1]!);
  if (created.status !== 'approved' || called.result?.structuredContent?.status !== 'approved')
    throw new Error(`the rule did not answer: ${JSON.stringify(created)} ${JSON.stringify(called)}`);
}

async function onStack(infra: Infra, mode: StackMode, label: string, databaseUrl: string): Promise<Figures[][]> {
  const stack: Stack = await startStack({
    mode,
    databaseUrl,
    natsUrl: infra.natsUrl,
    name: 'bench-mcp',
    env: { LOG_REQUESTS: 'false', DB_POOL_SIZE: '10', RATE_LIMITS: 'false' },
  });
  try {
    const api = apiClient(stack.baseUrl);
    const account = await api.newAccount();
    const device = api.device(account.device_id);
    await device.post('/account/plan', { plan: 'unlimited' });
    const rule = { name: 'reads', decision: 'auto_approve', action_type: 'data_access', risk_level_max: 'low' };
    const made = await device.post('/rules', rule);
    if (made.status !== 200) throw new Error(`rule failed: ${made.status} ${JSON.stringify(made.body)}`);
    const origin = new URL(stack.baseUrl).origin;
    await checkAnsweredAtOnce(origin, account.api_key);
    const measured: Figures[][] = [];
    const turns = { origin, apiKey: account.api_key, label, cpu: cpuProbe(processGroups(stack, databaseUrl)) };
    for (const concurrency of CONCURRENCY) measured.push(await inTurns(turns, concurrency));
    return measured;
  } finally {
    await stack.stop();
  }
}

export const mcpBench: BenchCase = {
  name: 'mcp',
  description: 'a request_approval tool call over POST /mcp beside the same create over POST /api/v1/actions',
  async run(infra) {
    out(
      `${ROUNDS} rounds of ${SLICE_SECONDS} s slices each at ${CONCURRENCY.join(' and ')} at a time (after 1 s each to warm up); ` +
        'an auto_approve rule (data_access, risk low) answers both: the tool call and the same request as a plain create',
    );
    const modes: Array<[StackMode, string]> = [['all-in-one', '(a) all-in-one']];
    if (infra.natsUrl) modes.push(['processes', '(b) processes']);
    else out('(b) skipped: no NATS server reachable');
    const measured: Figures[][] = [];
    for (const [mode, label] of modes.filter(([m]) => MODES.includes(m)))
      measured.push(...(await withDatabase(infra, (url) => onStack(infra, mode, label, url))));
    table(measured.flat());
    for (const [create, tool] of measured) printRatio(create!, tool!);
  },
};
