// An open-loop load at a steady rate: request i is due at start + i / rate, spread evenly over the run, and its
// latency counts from when it was due (a request that waits for a free connection waits on the clock). autocannon's
// rate cap is not this: each connection sends at full speed until it has made its share of the second, then idles,
// so its "half rate" is bursts at full speed, measured as such.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { Figures } from './load.js';
import { pacedClient } from './paced-client.js';

export interface PacedOptions {
  rate: number;
  seconds: number;
  connections: number;
  /**
   * Seconds paced at the same rate before the measured run, not counted: the generator's connections open and the
   * server leaves its idle state (a server idle for a while started every paced run with ~0.4 s of late requests,
   * the reference too, which alone set the p99 of a 10 s run). Their p99 is reported as `warmUpP99`.
   */
  warmUpSeconds?: number;
  /** Headers made afresh for every request (e.g. a new Idempotency-Key each time). */
  eachRequest?: () => Record<string, string>;
  /** A request later than this from its due time counts as late (LateRequests); default 10 ms. */
  lateMs?: number;
}

/**
 * The generator's own event-loop delay over the measured run, in ms: a send due while the generator's thread is held
 * (its garbage collection, a wait for a core) goes late and counts against the server, so a run reports it.
 */
export interface GeneratorDelay {
  p99: number;
  max: number;
}

/** Late requests are counted by windows this long, so a burst (a stall) shows apart from lateness spread thin. */
const WINDOW_MS = 100;

/** The measured run's late requests: how many, in how many windows, and the windows with the most. */
export interface LateRequests {
  count: number;
  windows: number;
  /** The worst windows, most late first; `atSeconds` from the start of the run's warm-up. */
  worst: Array<{ atSeconds: number; count: number }>;
}

function lateRequests(byIndex: Float64Array, warmUp: number, rate: number, lateMs: number): LateRequests {
  const perWindow = new Map<number, number>();
  let count = 0;
  for (let i = warmUp; i < byIndex.length; i++) {
    if (byIndex[i]! <= lateMs) continue;
    count++;
    const window = Math.floor((i * 1000) / rate / WINDOW_MS);
    perWindow.set(window, (perWindow.get(window) ?? 0) + 1);
  }
  const worst = [...perWindow]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([window, n]) => ({ atSeconds: (window * WINDOW_MS) / 1000, count: n }));
  return { count, windows: perWindow.size, worst };
}

const percentile = (sorted: Float64Array, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** POSTs `body` to `url` at `rate` per second for `seconds`; latency percentiles with sub-millisecond precision. */
export async function pacedLoad(
  name: string,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  options: PacedOptions,
): Promise<Figures & { warmUpP99?: number; late: LateRequests; generatorDelay: GeneratorDelay }> {
  const target = new URL(url);
  const client = pacedClient(target.origin, options.connections);
  const payload = JSON.stringify(body);
  const warmUp = Math.round(options.rate * (options.warmUpSeconds ?? 0));
  const total = warmUp + Math.round(options.rate * options.seconds);
  // Each request's latency at its index: its place in the run is its due time.
  const byIndex = new Float64Array(total);
  let non2xx = 0;
  let errors = 0;
  const started = performance.now();
  const dueAt = (i: number) => started + (i * 1000) / options.rate;
  const path = `${target.pathname}${target.search}`;
  // The same request every time, unless each needs headers of its own: built once, nothing kept per request.
  const fixed = options.eachRequest ? null : client.request(path, headers, payload);
  let answered = 0;
  let allAnswered: () => void = () => {};
  const send = async (i: number) => {
    const counted = i >= warmUp;
    try {
      const status = await client.send(
        fixed ?? client.request(path, { ...headers, ...options.eachRequest?.() }, payload),
      );
      if (counted && (status < 200 || status > 299)) non2xx++;
    } catch {
      if (counted) errors++;
    }
    byIndex[i] = performance.now() - dueAt(i);
    if (++answered === total) allAnswered();
  };
  // The sends' promises are not kept: holding every one of them until the end of the run grew the generator's old
  // generation, and its mark-compact pauses (7-13 ms) delayed the sends due meanwhile, counted as the server's.
  const done = new Promise<void>((resolve) => {
    allAnswered = resolve;
  });
  if (total === 0) allAnswered();
  // Measured from the first tick past the warm-up (a tick sends every request then due, so it may step over it).
  const delay = monitorEventLoopDelay({ resolution: 1 });
  let measuring = false;
  let next = 0;
  const tick = () => {
    if (!measuring && next >= warmUp) measuring = delay.enable();
    const now = performance.now();
    while (next < total && dueAt(next) <= now) void send(next++);
    if (next < total) setTimeout(tick, 1);
  };
  tick();
  await done;
  delay.disable();
  const elapsed = (performance.now() - dueAt(warmUp)) / 1000;
  client.close();
  // Typed arrays sort numerically.
  const latencies = byIndex.slice(warmUp).sort();
  const warmUpLatencies = byIndex.slice(0, warmUp).sort();
  return {
    name,
    rps: (total - warmUp) / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    non2xx,
    errors,
    total: total - warmUp,
    ...(warmUp ? { warmUpP99: percentile(warmUpLatencies, 99) } : {}),
    late: lateRequests(byIndex, warmUp, options.rate, options.lateMs ?? 10),
    generatorDelay: { p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 },
  };
}
