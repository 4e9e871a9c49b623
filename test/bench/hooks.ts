// Coding-agent hooks (POST /hooks/claude-code). (1) A hook call a rule answers at once beside a plain POST /actions of
// the same request that the same rule answers, at 1 and at 16 at a time, each loop of the load alternating the two
// (slices of one then the other swung by 3x on this shared machine), every request timed on its own (sub-millisecond):
// p50 and p99 and their ratio (goal: the hook within 1.2x of the create). Where the time went: the services' own
// histograms, and the gateway's bus requests (an extra read shows there). (2) A hook call
// held pending: from the approve call's response to the hook's HTTP answer, as agent-outcome.ts measures held waits
// (goal: p99 under 50 ms), beside a held GET /actions/{id}?wait=30 in turns. On the all-in-one process and on one
// process per service over NATS; there the agent's calls go to a second gateway, so the decision crosses NATS.
import { readFileSync } from 'node:fs';
import { newActionOfHook } from '@agent-auth/contracts';
import { apiClient } from '../harness/http.js';
import { parseExposition } from '../harness/prometheus-text.js';
import { openEventStream } from '../harness/sse.js';
import { type Stack, startStack, type StackMode } from '../harness/stack.js';
import { type Figures, out, table, withDatabase, type BenchCase, type Infra } from './load.js';
import { figures, inParallel, type NotificationFigures, notificationTable } from './notification-latency.js';
import { pacedClient } from './paced-client.js';

/** Seconds of the two sides mixed at each concurrency. */
const MIXED_SECONDS = Number(process.env.BENCH_HOOKS_SECONDS ?? 6);
const CONCURRENCY = (process.env.BENCH_HOOKS_CONCURRENCY ?? '1,16').split(',').map(Number);
const HELD_REQUESTS = Number(process.env.BENCH_HOOKS_HELD ?? 100);
const MODES = (process.env.BENCH_HOOKS_MODES ?? 'all-in-one,processes').split(',').map((m) => m.trim());
/** How long after the device sees the request it approves: the hook's held wait is in place by then. */
const PARK_MS = 20;
const RATIO_GOAL = 1.2;
const HELD_P99_GOAL_MS = 50;

const READ = JSON.parse(
  readFileSync(new URL('../fixtures/hooks/claude-code/pre-tool-use.read.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;
/** Each hook call has its own tool_use_id, or it would join the first call's request. */
let calls = 0;
const hookOfRead = () => JSON.stringify({ ...READ, tool_use_id: `toolu_bench_${process.pid}_${++calls}` });
/** The plain create: the request the hook makes of the Read, as POST /actions takes it. */
const CREATE_OF_READ = JSON.stringify(newActionOfHook('claude-code', READ as never, 290));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (sorted: Float64Array, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;

/** One of the two requests under comparison. */
interface Side {
  label: string;
  path: string;
  body: () => string;
  /** The series of the services' histograms that time this request (see stagesOf). */
  route: string;
  subject: string;
}

const SIDES: Side[] = [
  {
    label: 'POST /actions',
    path: '/api/v1/actions',
    body: () => CREATE_OF_READ,
    route: '/api/v1/actions',
    subject: 'actions.create',
  },
  {
    label: 'POST /hooks/claude-code',
    path: '/api/v1/hooks/claude-code',
    body: hookOfRead,
    route: '/api/v1/hooks/claude-code',
    subject: 'actions.create_tool_call',
  },
];

/**
 * `concurrency` loops of one request after another for `seconds`, each loop alternating the sides (loop k starts
 * with side k), so that both meet the same machine at the same moments; each side's latencies in ms.
 */
async function closedLoop(origin: string, apiKey: string, sides: Side[], concurrency: number, seconds: number) {
  const client = pacedClient(origin, concurrency);
  const headers = { 'x-api-key': apiKey };
  const runs = sides.map(() => ({ latencies: [] as number[], failed: 0 }));
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, loop) => {
      for (let n = loop; performance.now() < until; n++) {
        const side = sides[n % sides.length]!;
        const bytes = client.request(side.path, headers, side.body());
        const sent = performance.now();
        const status = await client.send(bytes).catch(() => 0);
        const run = runs[n % sides.length]!;
        run.latencies.push(performance.now() - sent);
        if (status !== 200) run.failed++;
      }
    }),
  );
  client.close();
  return runs;
}

/** Where a request's time went, by the services' own histograms: sum and count of each timed stage. */
interface Stage {
  name: string;
  metricsUrl: string;
  metric: string;
  series: (side: Side) => Record<string, string>;
}

function stagesOf(stack: Stack): Stage[] {
  const gateway = `${new URL(stack.baseUrl).origin}/metrics`;
  const stages: Stage[] = [
    {
      name: 'gateway HTTP',
      metricsUrl: gateway,
      metric: 'agent_auth_http_request_duration_seconds',
      series: (s) => ({ method: 'POST', route: s.route }),
    },
    {
      name: 'bus round trip',
      metricsUrl: gateway,
      metric: 'agent_auth_bus_request_duration_seconds',
      series: (s) => ({ subject: s.subject }),
    },
  ];
  const port = /"service":"actions","metrics_port":(\d+)/.exec(stack.logs())?.[1];
  if (stack.mode === 'processes' && port)
    stages.push({
      name: 'actions handler',
      metricsUrl: `http://127.0.0.1:${port}/metrics`,
      metric: 'agent_auth_bus_handled_duration_seconds',
      series: (s) => ({ subject: s.subject }),
    });
  return stages;
}

/** A stage's summed seconds and count for one side's series, at this moment. */
async function readStage(stage: Stage, side: Side): Promise<{ sum: number; count: number }> {
  const text = await (await fetch(stage.metricsUrl)).text();
  const wanted = Object.entries(stage.series(side));
  let sum = 0;
  let count = 0;
  for (const { name, labels, value } of parseExposition(text).samples) {
    if (!wanted.every(([k, v]) => labels[k] === v)) continue;
    if (name === `${stage.metric}_sum`) sum += value;
    if (name === `${stage.metric}_count`) count += value;
  }
  return { sum, count };
}

/** One side's figures at one concurrency: latency, and each stage's mean ms. */
interface Measured extends Figures {
  stageMeans: number[];
}

/** How many bus requests the gateway made, by subject, at this moment (its histogram's counts). */
async function busRequests(stack: Stack): Promise<Map<string, number>> {
  const text = await (await fetch(`${new URL(stack.baseUrl).origin}/metrics`)).text();
  const counts = new Map<string, number>();
  for (const { name, labels, value } of parseExposition(text).samples)
    if (name === 'agent_auth_bus_request_duration_seconds_count' && labels.subject)
      counts.set(labels.subject, (counts.get(labels.subject) ?? 0) + value);
  return counts;
}

/**
 * The two sides mixed at one concurrency (after a second to warm up): latency, where the time went by the services'
 * histograms, and the gateway's bus requests per pair of requests (one of each side).
 */
async function mixed(stack: Stack, apiKey: string, label: string, concurrency: number) {
  const origin = new URL(stack.baseUrl).origin;
  const stages = stagesOf(stack);
  await closedLoop(origin, apiKey, SIDES, concurrency, 1);
  const read = () => Promise.all(SIDES.map((side) => Promise.all(stages.map((s) => readStage(s, side)))));
  const [before, busBefore] = [await read(), await busRequests(stack)];
  const runs = await closedLoop(origin, apiKey, SIDES, concurrency, MIXED_SECONDS);
  const [after, busAfter] = [await read(), await busRequests(stack)];
  const pairs = Math.min(...runs.map((r) => r.latencies.length));
  const bus = [...busAfter]
    .map(([subject, n]) => [subject, (n - (busBefore.get(subject) ?? 0)) / pairs] as const)
    .filter(([, perPair]) => perPair >= 0.01);
  const sides: Measured[] = SIDES.map((side, i) => {
    const samples = Float64Array.from(runs[i]!.latencies).sort();
    const stageMeans = stages.map((_, j) => {
      const count = after[i]![j]!.count - before[i]![j]!.count;
      return count ? ((after[i]![j]!.sum - before[i]![j]!.sum) / count) * 1000 : Number.NaN;
    });
    return {
      name: `${label}, ${concurrency} at a time: ${side.label}`,
      rps: samples.length / MIXED_SECONDS,
      p50: percentile(samples, 50),
      p99: percentile(samples, 99),
      non2xx: runs[i]!.failed,
      errors: 0,
      total: samples.length,
      stageMeans,
    };
  });
  return { sides, bus };
}

const mark = (ok: boolean) => (ok ? '✔' : '✘');

/** The hook beside the create at one concurrency: each ratio with its goal mark, the added ms, and the stages. */
function printRatio(stack: Stack, measured: Awaited<ReturnType<typeof mixed>>): void {
  const [create, hook] = measured.sides as [Measured, Measured];
  const part = (name: string, f: (m: Measured) => number) => {
    const r = f(hook) / f(create);
    const added = f(hook) - f(create);
    return `${name} ${r.toFixed(2)} (${added >= 0 ? '+' : ''}${added.toFixed(2)} ms) ${mark(r <= RATIO_GOAL)}`;
  };
  out(
    `ratio ${hook.name.replace(/: .*/, '')} hook / create: ${part('p50', (m) => m.p50)}, ${part('p99', (m) => m.p99)} (goal <= ${RATIO_GOAL})`,
  );
  const stages = stagesOf(stack)
    .map((s, i) => `${s.name} ${create.stageMeans[i]!.toFixed(2)} / ${hook.stageMeans[i]!.toFixed(2)}`)
    .join('; ');
  out(`  mean ms per request, create / hook (the services' histograms): ${stages}`);
  const bus = measured.bus.map(([subject, n]) => `${subject} ${n.toFixed(2)}`).join(', ');
  out(`  the gateway's bus requests per create and hook call together: ${bus}`);
}

/**
 * A hook call held pending, approved by the device: from the approve response to the hook's answer. Beside it, in
 * turns on each worker, its reference: a plain create held by GET /actions/{id}?wait=30 (agent-outcome.ts).
 */
async function heldAnswers(stack: Stack, agentUrl: string, label: string, concurrency: number) {
  const api = apiClient(stack.baseUrl);
  const account = await api.newAccount();
  const device = api.device(account.device_id);
  await device.post('/account/plan', { plan: 'unlimited' });
  const stream = await openEventStream(`${stack.baseUrl}/device/events`, { 'x-device-id': account.device_id });
  /** The device's side: sees the request, then approves it PARK_MS later; when its approve was answered. */
  const approveOnSight = async (title: string) => {
    const created = await stream.next((e) => e.event === 'action.created' && e.data.action.title === title);
    const pending = await device.get('/pending');
    const item = (pending.body.requests as any[]).find((r) => r.id === created.data.action.id);
    await sleep(PARK_MS);
    const approve = await device.post(`/actions/${item.id}/approve`, { content_hash: item.content_hash });
    if (approve.status !== 200) throw new Error(`approve failed: ${approve.status} ${JSON.stringify(approve.body)}`);
    return performance.now();
  };
  const post = (path: string, headers: Record<string, string>, body: unknown) =>
    fetch(`${agentUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const hooks: number[] = [];
  const waits: number[] = [];
  try {
    await inParallel(HELD_REQUESTS, concurrency, async (i) => {
      const command = `npm test -- --grep case-${i}`;
      const input = { ...READ, tool_name: 'Bash', tool_input: { command }, tool_use_id: `toolu_held_${i}` };
      const answer = post('/hooks/claude-code?timeout=30', { authorization: `Bearer ${account.api_key}` }, input).then(
        async (r) => ({ at: performance.now(), status: r.status, body: (await r.json()) as any }),
      );
      const approved = await approveOnSight(`Run: ${command}`);
      const reply = await answer;
      const decision = reply.body?.hookSpecificOutput?.permissionDecision;
      if (reply.status !== 200 || decision !== 'allow') throw new Error(`hook answered ${JSON.stringify(reply.body)}`);
      hooks.push(reply.at - approved);

      const title = `Run: npm run build -- case-${i}`;
      const created = await post('/actions', { 'x-api-key': account.api_key }, { action_type: 'system', title });
      const { id } = (await created.json()) as { id: string };
      const held = fetch(`${agentUrl}/actions/${id}?wait=30`, { headers: { 'x-api-key': account.api_key } }).then(
        async (r) => ({ at: performance.now(), body: (await r.json()) as { status: string } }),
      );
      const approvedToo = await approveOnSight(title);
      const read = await held;
      if (read.body.status !== 'approved') throw new Error(`held wait answered ${read.body.status}`);
      waits.push(read.at - approvedToo);
    });
  } finally {
    stream.close();
  }
  return [
    figures(`${label}, ${concurrency} at a time: approve → hook answer`, hooks),
    figures(`${label}, ${concurrency} at a time: approve → held wait (ref.)`, waits),
  ];
}

/** One stack: the account with its rule, the two sides in turns at each concurrency, then the held hooks. */
async function onStack(infra: Infra, mode: StackMode, label: string, databaseUrl: string) {
  const stack = await startStack({
    mode,
    databaseUrl,
    natsUrl: infra.natsUrl,
    name: 'bench-hooks',
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
    await checkAnsweredAtOnce(stack.baseUrl, account.api_key);
    const measured: Array<Awaited<ReturnType<typeof mixed>>> = [];
    for (const concurrency of CONCURRENCY) measured.push(await mixed(stack, account.api_key, label, concurrency));
    table(measured.flatMap((m) => m.sides));
    for (const m of measured) printRatio(stack, m);
    const held: NotificationFigures[] = [];
    const agentUrl = stack.mode === 'processes' ? await stack.addGateway() : stack.baseUrl;
    for (const concurrency of CONCURRENCY) held.push(...(await heldAnswers(stack, agentUrl, label, concurrency)));
    return held;
  } finally {
    await stack.stop();
  }
}

/** Both sides are what they claim: the rule approves the create, and the hook answers allow. */
async function checkAnsweredAtOnce(baseUrl: string, apiKey: string): Promise<void> {
  const post = (path: string, body: string) =>
    fetch(`${baseUrl}${path.replace('/api/v1', '')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body,
    }).then((r) => r.json() as Promise<any>);
  const created = await post(SIDES[0]!.path, SIDES[0]!.body());
  const hooked = await post(SIDES[1]!.path, SIDES[1]!.body());
  if (created.status !== 'approved' || hooked.hookSpecificOutput?.permissionDecision !== 'allow')
    throw new Error(`the rule did not answer: ${JSON.stringify(created)} ${JSON.stringify(hooked)}`);
}

export const hooksBench: BenchCase = {
  name: 'hooks',
  description:
    'POST /hooks/claude-code a rule answers, beside POST /actions the same rule answers; approve → held hook answer',
  async run(infra) {
    out(
      `(1) ${MIXED_SECONDS} s at ${CONCURRENCY.join(' and ')} at a time (after 1 s to warm up), each loop alternating a plain create ` +
        `and a hook call (so each has half the requests); an auto_approve rule (data_access, risk low) answers both: the hook's ` +
        `Read and, as POST /actions, the request it makes`,
    );
    const held: NotificationFigures[] = [];
    const modes: Array<[StackMode, string]> = [['all-in-one', '(a) all-in-one']];
    if (infra.natsUrl) modes.push(['processes', '(b) processes']);
    else out('(b) skipped: no NATS server reachable');
    for (const [mode, label] of modes.filter(([m]) => MODES.includes(m)))
      held.push(...(await withDatabase(infra, (url) => onStack(infra, mode, label, url))));
    out();
    out(
      `(2) ${HELD_REQUESTS} hook calls held pending at each concurrency, each approved ${PARK_MS} ms after the device saw it, in turns with a plain create held by GET /actions/{id}?wait=30; in (b) the agent's calls go to a second gateway`,
    );
    notificationTable(held, out);
    for (const row of held.filter((r) => r.name.endsWith('hook answer')))
      out(
        `p99 ${row.name}: ${row.p99.toFixed(1)} ms (goal < ${HELD_P99_GOAL_MS} ms) ${mark(row.p99 < HELD_P99_GOAL_MS)}`,
      );
  },
};
