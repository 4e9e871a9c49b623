// The cost of metrics on the hot path: POST /actions on the all-in-one process with METRICS=true (recorded, and
// /metrics scraped every 5 s during the run, three times as often as deploy/prometheus scrapes) against
// METRICS=false (nothing recorded). The two alternate over BENCH_METRICS_ROUNDS rounds so drift on a shared
// machine hits both; the median of the per-round ratios is the figure (goal: on/off at least 0.97).
// Throughput on a busy shared machine swings by more than 3 %, so the case also measures the cost directly: the
// CPU time the process spends per create (from its own process_cpu_seconds_total and request count) against the
// time the recording calls of one create take (one HTTP observation, three bus requests sent and served, one
// decision), which no neighbour's load distorts much.
import { recordBusHandled, recordBusRequest, recordDecision, recordHttpRequest } from '@agent-auth/metrics';
import { apiClient } from '../harness/http.js';
import { parseExposition, sampleValue } from '../harness/prometheus-text.js';
import { startStack } from '../harness/stack.js';
import { PURCHASE } from './action-creation.js';
import { load, out, table, withDatabase, type BenchCase, type Figures, type Infra } from './load.js';

const ROUNDS = Number(process.env.BENCH_METRICS_ROUNDS ?? 3);
const SCRAPE_EVERY_MS = 5000;

const ROUTE = { method: 'POST', route: '/api/v1/actions' };
let cpuPerCreateMs: number[] = [];

async function cpuAndCreates(origin: string): Promise<[number, number]> {
  const page = parseExposition(await (await fetch(`${origin}/metrics`)).text());
  return [
    sampleValue(page, 'process_cpu_seconds_total'),
    sampleValue(page, 'agent_auth_http_request_duration_seconds_count', ROUTE),
  ];
}

/** CPU microseconds the recording calls of one create take, averaged over many (CPU time: neighbours do not count). */
function recordingMicrosPerCreate(): number {
  const n = 200_000;
  const run = () => {
    const started = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      recordHttpRequest('POST', '/api/v1/actions', 200, 0.004);
      for (const subject of ['actions.create', 'policy.decide', 'actions.authenticateAgent']) {
        recordBusRequest(subject, 'ok', 0.002);
        recordBusHandled(subject, 'ok', 0.0015);
      }
      recordDecision('pending', 'policy');
    }
    const used = process.cpuUsage(started);
    return (used.user + used.system) / n;
  };
  run(); // warm-up
  return Math.min(run(), run(), run());
}

async function creation(infra: Infra, metrics: boolean, label: string): Promise<Figures> {
  return withDatabase(infra, async (databaseUrl) => {
    const env = { LOG_REQUESTS: 'false', DB_POOL_SIZE: '10', RATE_LIMITS: 'false', METRICS: String(metrics) };
    const stack = await startStack({
      mode: 'all-in-one',
      databaseUrl,
      natsUrl: infra.natsUrl,
      name: 'bench-metrics',
      env,
    });
    const origin = new URL(stack.baseUrl).origin;
    const scraper = metrics
      ? setInterval(
          () =>
            void fetch(`${origin}/metrics`)
              .then((r) => r.text())
              .catch(() => {}),
          SCRAPE_EVERY_MS,
        )
      : undefined;
    try {
      const api = apiClient(stack.baseUrl);
      const account = await api.newAccount();
      await api.device(account.device_id).post('/account/plan', { plan: 'unlimited' });
      const before = metrics ? await cpuAndCreates(origin) : undefined;
      const figures = await load(label, `${stack.baseUrl}/actions`, { 'x-api-key': account.api_key }, PURCHASE);
      if (before) {
        const after = await cpuAndCreates(origin);
        cpuPerCreateMs.push(((after[0] - before[0]) * 1000) / (after[1] - before[1]));
      }
      return figures;
    } finally {
      clearInterval(scraper);
      await stack.stop();
    }
  });
}

export const metricsCost: BenchCase = {
  name: 'metrics',
  description: `POST /actions (all-in-one) with metrics on (scraped every 5 s) vs off, alternating over ${ROUNDS} rounds`,
  async run(infra) {
    const rows: Figures[] = [];
    const ratios: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate which goes first, so warming the machine favours neither.
      const order = round % 2 === 1 ? [false, true] : [true, false];
      const figures: Record<string, Figures> = {};
      for (const on of order)
        figures[String(on)] = await creation(infra, on, `round ${round}: metrics ${on ? 'on' : 'off'}`);
      rows.push(figures.false!, figures.true!);
      ratios.push(figures.true!.rps / figures.false!.rps);
    }
    table(rows);
    const sorted = [...ratios].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    out(
      `on/off throughput per round: ${ratios.map((r) => r.toFixed(3)).join(', ')}; median ${median.toFixed(3)} (goal: at least 0.97)`,
    );
    const cpu = [...cpuPerCreateMs].sort((a, b) => a - b)[Math.floor(cpuPerCreateMs.length / 2)]!;
    const micros = recordingMicrosPerCreate();
    out(
      `CPU per create (process, metrics on, median): ${cpu.toFixed(3)} ms; recording one create's metrics: ${micros.toFixed(2)} µs`,
    );
    out(`=> metrics cost ${((micros / 1000 / cpu) * 100).toFixed(2)} % of a create's CPU time (goal: at most 3 %)`);
    cpuPerCreateMs = [];
  },
};
