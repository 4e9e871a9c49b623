import type { ActionsDeps } from './deps.js';

const BATCH = 500;

/** Expires overdue requests every interval so their outcome is recorded (and announced) even if nobody reads them. */
export function startExpirySweeper(deps: ActionsDeps, intervalMs: number): { stop(): Promise<void> } {
  let running: Promise<void> | null = null;
  const sweep = async () => {
    try {
      let expired;
      do {
        expired = await deps.requests.expireDue(BATCH);
        if (expired.length) deps.log.info({ count: expired.length }, 'expired overdue requests');
      } while (expired.length === BATCH);
    } catch (err) {
      deps.log.error({ err }, 'expiry sweep failed');
    }
  };
  const timer = setInterval(() => {
    running ??= sweep().finally(() => (running = null));
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
