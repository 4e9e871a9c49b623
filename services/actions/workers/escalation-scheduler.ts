import type { Logger } from '@agent-auth/logging';
import type { EscalationStore } from '../store/escalations.js';

const BATCH = 100;
/**
 * The longest the scheduler sleeps: a request created meanwhile escalates at least 5 s after its creation
 * (escalate_after_seconds' minimum), so one look every half second finds it long before it is due.
 */
const LOOK_EVERY_MS = 500;
/** After a failure (the database away), the next try. */
const RETRY_MS = 1_000;

/**
 * Escalates pending requests when their escalate_at comes. Every replica runs one: each look escalates what is due
 * (skip locked: one replica per request), then sleeps until the next escalation is due by the database's clock,
 * or LOOK_EVERY_MS at most. So an escalation goes out within a timer's precision and one statement of its time,
 * and a replica killed mid-way leaves its rows to the others (its transaction never committed).
 */
export function startEscalationScheduler(input: {
  escalations: EscalationStore;
  log: Logger;
  /** Told of each escalation done (when it was due, when it was done). */
  onEscalated?: (lateMs: number) => void;
}): { stop(): Promise<void> } {
  const { escalations, log } = input;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, ms);
    });
  const look = async (): Promise<number> => {
    let done: Awaited<ReturnType<EscalationStore['escalateDue']>>;
    do {
      done = await escalations.escalateDue(BATCH);
      for (const row of done) {
        const lateMs = row.escalated_at.getTime() - row.escalate_at.getTime();
        input.onEscalated?.(lateMs);
        log.info({ action_id: row.id, late_ms: lateMs }, 'request escalated');
      }
    } while (done.length === BATCH && !stopped);
    const next = await escalations.nextDueInMs();
    return next === null ? LOOK_EVERY_MS : Math.min(next, LOOK_EVERY_MS);
  };
  const loop = (async () => {
    while (!stopped) {
      const ms = await look().catch((err: unknown) => {
        log.error({ err }, 'escalation look failed');
        return RETRY_MS;
      });
      if (!stopped) await sleep(ms);
    }
  })();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      wake?.();
      await loop;
    },
  };
}
