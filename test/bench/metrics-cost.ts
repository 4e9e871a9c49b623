// The cost of metrics on the hot path: POST /actions on an all-in-one process with METRICS=true (recorded, and
// /metrics scraped every 5 s, three times as often as deploy/prometheus scrapes) against one with METRICS=false
// (nothing recorded). Both run side by side on their own databases and take turns under load in short slices
// (BENCH_METRICS_ROUNDS pairs of BENCH_METRICS_SLICE_SECONDS each, the order alternating, the databases swapped
// half-way), so whatever the machine does meanwhile (a checkpoint, autovacuum, tables growing) falls on both
// alike: one run after the other swung by ±8 % between rounds on the quiet 2-core machine, more than the 3 % being
// measured. The figure is the ratio of the creates each served in the same total time (goal: at least 0.97).
// The case also measures the cost directly: the CPU time per create of each process and of its database's
// backends (from /proc), and the time the recording calls of one create take (one HTTP observation, three bus
// requests timed, one decision), which no neighbour's load distorts much.
import { recordBusRequest, recordDecision, recordHttpRequest } from '@agent-auth/metrics';
import { apiClient } from '../harness/http.js';
import { startStack, type Stack } from '../harness/stack.js';
import { PURCHASE } from './action-creation.js';
import { cpuProbe, processGroups } from './cpu.js';
import { load, out, table, withDatabase, type BenchCase, type Figures, type Infra } from './load.js';

const ROUNDS = Number(process.env.BENCH_METRICS_ROUNDS ?? 20);
const SLICE_SECONDS = Number(process.env.BENCH_METRICS_SLICE_SECONDS ?? 4);
const SCRAPE_EVERY_MS = 5000;
/** BENCH_METRICS_CONTROL=true runs the "on" side with metrics off too (an A/A run): the harness's own scatter. */
const CONTROL = process.env.BENCH_METRICS_CONTROL === 'true';

/** CPU microseconds the recording calls of one create take, averaged over many (CPU time: neighbours do not count). */
function recordingMicrosPerCreate(): number {
  const n = 200_000;
  const run = () => {
    const started = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      recordHttpRequest('POST', '/api/v1/actions', 200, 0.004);
      for (const subject of ['actions.create', 'policy.decide', 'actions.authenticateAgent']) {
        recordBusRequest(subject, 'ok', 0.002);
      }
      recordDecision('pending', 'policy');
    }
    const used = process.cpuUsage(started);
    return (used.user + used.system) / n;
  };
  run(); // warm-up
  return Math.min(run(), run(), run());
}

/** One side of the comparison: what its slices added up to, and the stack it runs on in the current phase. */
interface Side {
  metrics: boolean;
  creates: number;
  seconds: number;
  processMs: number;
  postgresMs: number;
  slices: Figures[];
  running?: {
    stack: Stack;
    url: string;
    headers: Record<string, string>;
    cpu: ReturnType<typeof cpuProbe>;
    warm: boolean;
  };
}

const newSide = (metrics: boolean): Side => ({
  metrics,
  creates: 0,
  seconds: 0,
  processMs: 0,
  postgresMs: 0,
  slices: [],
});

/** Starts the side's all-in-one process on a database, with an account on the unlimited plan. */
async function startSide(infra: Infra, side: Side, databaseUrl: string): Promise<Stack> {
  const env = {
    LOG_REQUESTS: 'false',
    DB_POOL_SIZE: '10',
    RATE_LIMITS: 'false',
    METRICS: String(side.metrics && !CONTROL),
  };
  const stack = await startStack({
    mode: 'all-in-one',
    databaseUrl,
    natsUrl: infra.natsUrl,
    name: 'bench-metrics',
    env,
  });
  const api = apiClient(stack.baseUrl);
  const account = await api.newAccount();
  await api.device(account.device_id).post('/account/plan', { plan: 'unlimited' });
  side.running = {
    stack,
    url: `${stack.baseUrl}/actions`,
    headers: { 'x-api-key': account.api_key },
    cpu: cpuProbe(processGroups(stack, databaseUrl)),
    warm: false,
  };
  return stack;
}

/** One slice of load on one side; the first one of a phase warms the process up first. */
async function slice(side: Side, round: number): Promise<Figures> {
  const running = side.running!;
  let used = new Map<string, number>();
  const probe = { start: () => running.cpu.start(), stop: () => (used = running.cpu.stop()) };
  const label = `round ${round}: metrics ${side.metrics ? 'on' : 'off'}`;
  const figures = await load(label, running.url, running.headers, PURCHASE, {
    seconds: SLICE_SECONDS,
    warmUp: !running.warm,
    probe,
  });
  running.warm = true;
  side.creates += figures.total ?? 0;
  side.seconds += SLICE_SECONDS;
  side.processMs += used.get('all-in-one') ?? 0;
  side.postgresMs += [...used].filter(([name]) => name.startsWith('postgres')).reduce((sum, [, ms]) => sum + ms, 0);
  side.slices.push(figures);
  return figures;
}

/** Half the rounds with each side on each database: a database that runs faster (vacuum, layout) favours neither. */
async function phase(
  infra: Infra,
  off: Side,
  on: Side,
  urls: [string, string],
  rounds: [number, number],
): Promise<void> {
  // Which process starts first alternates with the phase too: an A/A run (both off) found the second one slower.
  const first = rounds[0] === 1 ? off : on;
  const second = first === off ? on : off;
  const firstStack = await startSide(infra, first, first === off ? urls[0] : urls[1]);
  const secondStack = await startSide(infra, second, second === off ? urls[0] : urls[1]);
  const stacks = first === off ? [firstStack, secondStack] : [secondStack, firstStack];
  const origin = new URL(stacks[1]!.baseUrl).origin;
  const scraper = setInterval(
    () =>
      void fetch(`${origin}/metrics`)
        .then((r) => r.text())
        .catch(() => {}),
    SCRAPE_EVERY_MS,
  );
  try {
    for (let round = rounds[0]; round <= rounds[1]; round++) {
      // Alternate which goes first, so neither always follows the other's load.
      for (const side of round % 2 === 1 ? [off, on] : [on, off]) await slice(side, round);
    }
  } finally {
    clearInterval(scraper);
    await Promise.all(stacks.map((s) => s.stop()));
  }
}

function report(off: Side, on: Side): void {
  const ratios = on.slices.map((s, i) => s.rps / off.slices[i]!.rps);
  const median = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)]!;
  const total = (side: Side): Figures => ({
    name: `all ${ROUNDS} slices: metrics ${side.metrics ? 'on' : 'off'}`,
    rps: side.creates / side.seconds,
    p50: median50(side.slices),
    p99: Math.max(...side.slices.map((s) => s.p99)),
    non2xx: side.slices.reduce((sum, s) => sum + s.non2xx, 0),
    errors: side.slices.reduce((sum, s) => sum + s.errors, 0),
  });
  table([...off.slices.flatMap((s, i) => [s, on.slices[i]!]), total(off), total(on)]);
  out(`on/off throughput per round: ${ratios.map((r) => r.toFixed(3)).join(', ')}; median ${median.toFixed(3)}`);
  out(
    `=> on/off creates served in the same ${on.seconds} s: ${on.creates} / ${off.creates} = ` +
      `${(on.creates / off.creates).toFixed(3)} (goal: at least 0.97)`,
  );
  const per = (ms: number, side: Side) => ms / Math.max(1, side.creates);
  const [offP, onP, offDb, onDb] = [
    per(off.processMs, off),
    per(on.processMs, on),
    per(off.postgresMs, off),
    per(on.postgresMs, on),
  ];
  if (offP > 0) {
    out(
      `CPU ms per create (/proc): process off ${offP.toFixed(3)} / on ${onP.toFixed(3)}; its database's backends ` +
        `off ${offDb.toFixed(3)} / on ${onDb.toFixed(3)}; both together on/off ${((onP + onDb) / (offP + offDb)).toFixed(3)}`,
    );
  }
  const micros = recordingMicrosPerCreate();
  out(`recording one create's metrics: ${micros.toFixed(2)} µs of CPU`);
  if (onP > 0)
    out(
      `=> metrics recording is ${((micros / 1000 / onP) * 100).toFixed(2)} % of a create's process CPU time (goal: at most 3 %)`,
    );
}

function median50(slices: Figures[]): number {
  return [...slices].map((s) => s.p50).sort((a, b) => a - b)[Math.floor(slices.length / 2)]!;
}

export const metricsCost: BenchCase = {
  name: 'metrics',
  description:
    `POST /actions (all-in-one) with metrics on (scraped every 5 s) and off side by side, taking turns in ` +
    `${ROUNDS} rounds of ${SLICE_SECONDS} s each${CONTROL ? ' (CONTROL: both sides with metrics off)' : ''}`,
  async run(infra) {
    await withDatabase(infra, (first) =>
      withDatabase(infra, async (second) => {
        const [off, on] = [newSide(false), newSide(true)];
        const half = Math.ceil(ROUNDS / 2);
        await phase(infra, off, on, [first, second], [1, half]);
        await phase(infra, off, on, [second, first], [half + 1, ROUNDS]);
        report(off, on);
      }),
    );
  },
};
