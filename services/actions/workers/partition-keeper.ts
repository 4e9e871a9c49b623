import { startWakeLoop } from '@agent-auth/lifecycle';
import type { Logger } from '@agent-auth/logging';
import type { RequestPartitionStore } from '../store/request-partitions.js';

/** Rows copied per statement while converting: a few tenths of a second of work each, between the creates. */
const BACKFILL_BATCH = 5_000;

/**
 * Keeps the requests' partitions: finishes the online conversion a migration began (copies the older rows in
 * batches, then swaps the partitioned table in), makes the coming months' partitions, and, with RETENTION_DAYS,
 * drops the months older than that. Runs at start and every `intervalMs`; any replica may, the SQL serializes them.
 */
export function startPartitionKeeper(options: {
  partitions: RequestPartitionStore;
  intervalMs: number;
  retentionDays: number | undefined;
  log: Logger;
}): { stop(): Promise<void> } {
  const { partitions, log } = options;
  let stopped = false;
  const convert = async () => {
    let copied = 0;
    for (let n = BACKFILL_BATCH; n === BACKFILL_BATCH && !stopped; copied += n)
      n = await partitions.backfill(BACKFILL_BATCH);
    if (stopped) return;
    const started = Date.now();
    if (await partitions.finishConversion())
      log.info({ copied, swap_ms: Date.now() - started }, 'requests table partitioned by month');
  };
  const loop = startWakeLoop({
    pollMs: options.intervalMs,
    pass: async () => {
      if (await partitions.converting()) await convert();
      await partitions.addMonthsAhead();
      if (options.retentionDays === undefined) return;
      const dropped = await partitions.dropOlderThan(options.retentionDays);
      if (dropped.length)
        log.info({ partitions: dropped, retention_days: options.retentionDays }, 'dropped old requests');
    },
    onError: (err) => log.error({ err }, 'requests partition upkeep failed'),
  });
  return {
    async stop() {
      stopped = true;
      await loop.stop();
    },
  };
}
