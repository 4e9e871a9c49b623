// The cost of metrics on the hot path: POST /actions on an all-in-one process with METRICS=true (recorded, and
// /metrics scraped every 5 s, three times as often as deploy/prometheus scrapes) against one with METRICS=false
// (nothing recorded), side by side (side-by-side.ts): BENCH_METRICS_PHASES fresh pairs of processes, each taking
// BENCH_METRICS_ROUNDS turns of BENCH_METRICS_SLICE_SECONDS under load. The figure is the ratio of the creates each
// served in the same total time (goal: at least 0.97). The case also measures the cost directly: the CPU time per
// create of each process and of its database's backends (from /proc), and the time the recording calls of one
// create take (one HTTP observation, three bus requests timed, one decision), which no neighbour's load distorts.
import { recordBusRequest, recordDecision, recordHttpRequest } from '@agent-auth/metrics';
import type { Stack } from '../harness/stack.js';
import { out, type BenchCase } from './load.js';
import { reportSideBySide, sideBySide, type SideSpec } from './side-by-side.js';

const PHASES = Number(process.env.BENCH_METRICS_PHASES ?? 6);
const ROUNDS = Number(process.env.BENCH_METRICS_ROUNDS ?? 4);
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

/** Scrapes the process's /metrics every few seconds while it runs, as Prometheus would. */
const scraper = (stack: Stack) => {
  const origin = new URL(stack.baseUrl).origin;
  const timer = setInterval(
    () =>
      void fetch(`${origin}/metrics`)
        .then((r) => r.text())
        .catch(() => {}),
    SCRAPE_EVERY_MS,
  );
  return () => clearInterval(timer);
};

const off: SideSpec = { label: 'metrics off', env: { METRICS: 'false' } };
const on: SideSpec = CONTROL
  ? { label: 'metrics off (control)', env: { METRICS: 'false' } }
  : { label: 'metrics on', env: { METRICS: 'true' }, beside: scraper };

export const metricsCost: BenchCase = {
  name: 'metrics',
  description:
    `POST /actions (all-in-one) with metrics on (scraped every 5 s) and off side by side: ${PHASES} fresh pairs ` +
    `of processes, each taking ${ROUNDS} turns of ${SLICE_SECONDS} s${CONTROL ? ' (CONTROL: both sides off)' : ''}`,
  async run(infra) {
    const [a, b] = await sideBySide(infra, off, on, {
      phases: PHASES,
      roundsPerPhase: ROUNDS,
      sliceSeconds: SLICE_SECONDS,
    });
    reportSideBySide(a, b, 'goal: at least 0.97');
    const micros = recordingMicrosPerCreate();
    const processMsPerCreate = b.processMs / Math.max(1, b.creates);
    out(`recording one create's metrics: ${micros.toFixed(2)} µs of CPU`);
    if (processMsPerCreate > 0 && !CONTROL) {
      out(
        `=> metrics recording is ${((micros / 1000 / processMsPerCreate) * 100).toFixed(2)} % of a create's ` +
          'process CPU time (goal: at most 3 %)',
      );
    }
  },
};
