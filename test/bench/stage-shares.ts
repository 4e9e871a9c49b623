// Where a paced run's slow creates were slow, from the services' own latency histograms (libs/metrics): the share
// of creates over the goal at the gateway (its HTTP duration), in the gateway's bus round trip to actions, and in
// the actions handler. Over NATS, a round trip much slower than the handler is time in the hops (the two event
// loops and nats-server), not in the database. The all-in-one process has the first two (its in-process bus times
// the handler as the round trip).
import { parseExposition } from '../harness/prometheus-text.js';

/** One histogram to read: the process's /metrics URL, the metric, and the label that picks the create's series. */
export interface Stage {
  name: string;
  metricsUrl: string;
  metric: string;
  /** The labels the create's series carry, e.g. `{ subject: 'actions.create' }`. */
  series: Record<string, string>;
}

/** Cumulative bucket counts by upper bound (seconds), summed over the series that match; +Inf included. */
export type Buckets = Map<number, number>;

/** Reads the create's buckets of one histogram from Prometheus exposition text; series with a non-2xx status are left out. */
export function bucketsOf(text: string, metric: string, series: Record<string, string>): Buckets {
  const buckets: Buckets = new Map();
  for (const { name, labels, value } of parseExposition(text).samples) {
    if (name !== `${metric}_bucket` || labels.le === undefined) continue;
    if (!Object.entries(series).every(([k, v]) => labels[k] === v)) continue;
    if (labels.status_code !== undefined && !labels.status_code.startsWith('2')) continue;
    const bound = labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(labels.le);
    buckets.set(bound, (buckets.get(bound) ?? 0) + value);
  }
  return buckets;
}

/** Of the observations between two readings: how many, and the share above `seconds` (a bucket bound). */
export function shareOver(before: Buckets, after: Buckets, seconds: number): { count: number; share: number } {
  const delta = (bound: number) => (after.get(bound) ?? 0) - (before.get(bound) ?? 0);
  const count = delta(Number.POSITIVE_INFINITY);
  if (!after.has(seconds)) throw new Error(`no bucket bound at ${seconds} s`);
  return { count, share: count ? (count - delta(seconds)) / count : 0 };
}

/**
 * Reads each stage's buckets at start() and again at stop(); stop() answers each stage's share over `seconds`, or
 * nothing when a reading failed (a process with METRICS=false, say): the run goes on without these figures.
 */
export function stageProbe(stages: Stage[], seconds: number) {
  const read = async (): Promise<Buckets[] | null> => {
    try {
      return await Promise.all(
        stages.map(async (s) => bucketsOf(await (await fetch(s.metricsUrl)).text(), s.metric, s.series)),
      );
    } catch {
      return null;
    }
  };
  let before: Buckets[] | null = null;
  return {
    async start(): Promise<void> {
      before = await read();
    },
    async stop(): Promise<StageShare[]> {
      const after = await read();
      if (!before || !after || after.some((b) => b.size === 0)) return [];
      return stages.map((s, i) => ({ name: s.name, ...shareOver(before![i]!, after[i]!, seconds) }));
    },
  };
}

/** One stage's figure for a run. */
export interface StageShare {
  name: string;
  count: number;
  share: number;
}

/** One run's stage shares as a phrase, e.g. "gateway 6.2 %, bus round trip 4.4 %, handler 1.1 %". */
export function describeStageShares(shares: StageShare[] | undefined): string {
  if (!shares?.length) return 'unknown';
  return shares.map((s) => `${s.name} ${(100 * s.share).toFixed(1)} %`).join(', ');
}
