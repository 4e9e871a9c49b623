import { startWakeLoop } from '@agent-auth/lifecycle';
import type { Logger } from '@agent-auth/logging';
import type { DeliveryStore } from '../store/deliveries.js';

const PRUNE_EVERY_MS = 3_600_000;
const PRUNE_BATCH = 1_000;

/** Prunes finished deliveries past their retention now and every hour, in batches, logging what went. */
export function startRetention(deliveries: DeliveryStore, days: number, log: Logger) {
  const loop = startWakeLoop({
    pollMs: PRUNE_EVERY_MS,
    pass: async () => {
      const olderThan = new Date(Date.now() - days * 86_400_000);
      let total = 0;
      let pruned: number;
      do {
        pruned = await deliveries.pruneFinished(olderThan, PRUNE_BATCH);
        total += pruned;
      } while (pruned === PRUNE_BATCH && !loop.stopped);
      if (total > 0) log.info({ pruned: total, retention_days: days }, 'finished webhook deliveries pruned');
    },
    onError: (err) => log.warn({ err }, 'pruning webhook deliveries failed'),
  });
  return loop;
}
