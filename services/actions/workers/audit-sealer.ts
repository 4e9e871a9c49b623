import type { Logger } from '@agent-auth/logging';
import { sealingLag } from '@agent-auth/metrics';
import type { AuditChainStore } from '../store/audit-chain.js';

const BATCH = 1000;

/**
 * Seals new audit events into their accounts' hash chains every interval, off the request path (DESIGN 5.2:
 * within 2 s of the event). Any number of replicas run it: a round another replica is running is skipped (its
 * advisory lock is taken).
 */
export function startAuditSealer(input: { chain: AuditChainStore; intervalMs: number; log: Logger }): {
  stop(): Promise<void>;
} {
  const { chain, log } = input;
  const lag = sealingLag();
  let running: Promise<void> | null = null;
  let stopped = false;
  const round = async () => {
    try {
      // A full batch means more may be waiting: go round again at once rather than after the interval.
      for (let full = true; full && !stopped; ) {
        const sealed = await chain.seal(BATCH, false);
        const now = Date.now();
        for (const at of sealed.sealedAt) lag.observe((now - at.getTime()) / 1000);
        full = sealed.full;
      }
    } catch (err) {
      log.error({ err }, 'audit sealing failed; retrying next round');
    }
  };
  const timer = setInterval(() => {
    running ??= round().finally(() => (running = null));
  }, input.intervalMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
