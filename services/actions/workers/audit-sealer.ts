import type { Logger } from '@agent-auth/logging';
import { sealingLag } from '@agent-auth/metrics';
import type { AuditChainStore } from '../store/audit-chain.js';

/**
 * Most events one round seals (one transaction). A round's work on the process's own thread (decoding the events,
 * hashing each, encoding the chain rows) grows with its size and holds every request behind it: rounds of up to
 * 1,000 took 8-25 ms at 2,700 creates/s (540 events each, every 200 ms) and each left a step in the creates'
 * latency; rounds of 100, one after another while full, hold the thread about 1 ms at a time. Measured all-in-one,
 * paced at 2,700 creates/s for 10 s, five runs each way: creates over 8 ms, median 980 → 607 of 27,000.
 */
export const SEAL_ROUND_EVENTS = 100;

/**
 * Seals new audit events into their accounts' hash chains every interval, off the request path
 * (within 2 s of the event). Any number of replicas run it: a round that another replica's overtook writes nothing,
 * and this replica waits for the next interval.
 */
export function startAuditSealer(input: {
  chain: AuditChainStore;
  intervalMs: number;
  log: Logger;
  roundEvents?: number;
  /** Each round's sealing lags, in seconds (default: into this process's sealing-lag histogram). */
  sealed?: (lagsSeconds: number[]) => void;
}): {
  stop(): Promise<void>;
} {
  const { chain, log, roundEvents = SEAL_ROUND_EVENTS } = input;
  const sealed = input.sealed ?? observeSealingLags();
  let running: Promise<void> | null = null;
  let stopped = false;
  const round = async () => {
    try {
      // A full round means more may be waiting: go round again at once rather than after the interval.
      for (let full = true; full && !stopped; ) {
        const outcome = await chain.seal(roundEvents);
        const now = Date.now();
        if (outcome.sealedAt.length) sealed(outcome.sealedAt.map((at) => (now - at.getTime()) / 1000));
        full = outcome.full;
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

/** Records sealing lags (seconds) in this process's sealing-lag histogram. */
export function observeSealingLags(): (lagsSeconds: number[]) => void {
  const lag = sealingLag();
  return (lags) => {
    for (const seconds of lags) lag.observe(seconds);
  };
}
