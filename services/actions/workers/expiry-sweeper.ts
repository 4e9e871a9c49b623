import { startWakeLoop } from '@agent-auth/lifecycle';
import type { Logger } from '@agent-auth/logging';
import type { Expiry } from '../use-cases/expiry.js';
import { recordDecision } from '@agent-auth/metrics';

const BATCH = 500;

/** Expires overdue requests every interval so their outcome is recorded (and announced) even if nobody reads them. */
export function startExpirySweeper(expiry: Expiry, intervalMs: number, log: Logger): { stop(): Promise<void> } {
  return startWakeLoop({
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
      do pruned = await expiry.pruneKeys(BATCH);
      while (pruned === BATCH);
    },
    onError: (err) => log.error({ err }, 'expiry sweep failed'),
  });
}
