import type { VacuumSchedule } from '@agent-auth/db';
import { startWakeLoop } from '@agent-auth/lifecycle';
import type { Logger } from '@agent-auth/logging';
import type { Expiry } from '../use-cases/expiry.js';
import { recordDecision } from '@agent-auth/metrics';

const BATCH = 500;
/** Idempotency keys are vacuumed after this many pruned (vacuumAfterDeletes; each key lives 24 h, then goes). */
export const KEYS_VACUUM_EVERY_ROWS = 20_000;

/** Expires overdue requests every interval so their outcome is recorded (and announced) even if nobody reads them. */
export function startExpirySweeper(
  expiry: Expiry,
  intervalMs: number,
  log: Logger,
  keysVacuum?: VacuumSchedule,
): { stop(): Promise<void> } {
  const loop = startWakeLoop({
    pollMs: intervalMs,
    startAwake: false,
    pass: async () => {
      let round: { found: number; expired: number };
      do {
        round = await expiry.expireDue(BATCH);
        if (round.expired) log.info({ count: round.expired }, 'expired overdue requests');
        recordDecision('expired', 'expiry', round.expired);
      } while (round.found === BATCH);
      let pruned: number;
      do {
        pruned = await expiry.pruneKeys(BATCH);
        keysVacuum?.deleted(pruned);
      } while (pruned === BATCH);
      while ((await expiry.pruneToolCalls(BATCH)) === BATCH);
    },
    onError: (err) => log.error({ err }, 'expiry sweep failed'),
  });
  return {
    async stop() {
      await loop.stop();
      await keysVacuum?.settled();
    },
  };
}
