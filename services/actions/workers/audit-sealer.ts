import type { Logger } from '@agent-auth/logging';
import { sealingLag } from '@agent-auth/metrics';
import type { AuditChainStore } from '../store/audit-chain.js';

const BATCH = 1000;
const ACCOUNTS_PER_ROUND = 200;

/**
 * Seals new audit events into their accounts' hash chains every interval, off the request path (DESIGN 5.2:
 * within 2 s of the event). Any number of replicas run it at once: an account another replica is sealing is
 * skipped this round (its advisory lock is taken).
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
      let busy = true;
      while (busy && !stopped) {
        busy = false;
        for (const account of await chain.accountsWithUnsealed(ACCOUNTS_PER_ROUND)) {
          const sealed = await chain.seal(account, BATCH, false);
          const now = Date.now();
          for (const at of sealed ?? []) lag.observe((now - at.getTime()) / 1000);
          // A full batch means more may be waiting: go round again at once rather than after the interval.
          if (sealed?.length === BATCH) busy = true;
        }
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
