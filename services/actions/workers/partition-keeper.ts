import { startWakeLoop } from '@agent-auth/lifecycle';
import type { Logger } from '@agent-auth/logging';
import type { PartitionStore, RequestPartitionStore } from '../store/table-partitions.js';
import type { AuditRetention } from '../use-cases/audit-retention.js';

/** Rows copied per statement while converting: a few tenths of a second of work each, between the creates. */
const BACKFILL_BATCH = 5_000;

/**
 * Keeps the partitions of the requests and the audit trail (its events and their places in the chain): finishes the
 * online conversions the migrations began (copies the older rows in batches, then swaps the partitioned table in),
 * makes the coming months' partitions, and, with RETENTION_DAYS, drops the months older than that (the audit
 * trail's after a signed checkpoint per account). Runs at start and every `intervalMs`; any replica may, the SQL
 * serializes them.
 */
export function startPartitionKeeper(options: {
  requests: RequestPartitionStore;
  /** The audit trail's two tables. */
  audit: PartitionStore[];
  auditRetention: AuditRetention;
  intervalMs: number;
  retentionDays: number | undefined;
  log: Logger;
}): { stop(): Promise<void> } {
  const { requests, log, retentionDays } = options;
  let stopped = false;
  const convert = async (partitions: PartitionStore) => {
    let copied = 0;
    for (let n = BACKFILL_BATCH; n === BACKFILL_BATCH && !stopped; copied += n)
      n = await partitions.backfill(BACKFILL_BATCH);
    if (stopped) return;
    const started = Date.now();
    if (await partitions.finishConversion())
      log.info({ table: partitions.table, copied, swap_ms: Date.now() - started }, 'table partitioned by month');
  };
  const retain = async (days: number) => {
    const dropped = await requests.dropOlderThan(days);
    if (dropped.length) log.info({ partitions: dropped, retention_days: days }, 'dropped old requests');
    const cut = await options.auditRetention.cutOlderThan(days);
    if (cut.dropped.length)
      log.info({ months: cut.dropped, checkpoints: cut.checkpoints, retention_days: days }, 'dropped old audit events');
    if (cut.held.length) log.warn({ months: cut.held }, 'old audit events kept: not all sealed yet');
  };
  const loop = startWakeLoop({
    pollMs: options.intervalMs,
    pass: async () => {
      for (const partitions of [requests, ...options.audit]) {
        if (stopped) return;
        if (await partitions.converting()) await convert(partitions);
        await partitions.addMonthsAhead();
      }
      if (retentionDays !== undefined && !stopped) await retain(retentionDays);
    },
    onError: (err) => log.error({ err }, 'partition upkeep failed'),
  });
  return {
    async stop() {
      stopped = true;
      await loop.stop();
    },
  };
}
