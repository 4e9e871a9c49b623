import { startWakeLoop } from '@agent-auth/lifecycle';
import type { DeliveryRow } from '../store/deliveries.js';
import { deliverAttempt, reportUnaudited } from '../use-cases/deliver.js';
import type { NotifierDeps } from '../use-cases/deps.js';

const AUDIT_RETRY_EVERY_MS = 5_000;

export interface DeliveryLoop {
  /** Records a new delivery and, when there is room, makes its first attempt at once; idempotent per webhook id. */
  submit(job: Omit<DeliveryRow, 'attempts' | 'first_attempt_at'>): Promise<void>;
  /** Stops claiming and waits for the attempts in flight. */
  stop(): Promise<void>;
}

/**
 * Delivers due webhooks: claims jobs with skip locked (any number of notifiers share the table), signs each
 * attempt through the actions service, POSTs, records the attempt and schedules the next. Woken when a job is
 * recorded, and polls every WEBHOOK_POLL_MS for retries that come due.
 */
export function startDeliveryLoop(deps: NotifierDeps): DeliveryLoop {
  const { settings, log } = deps;
  const capacity = settings.WEBHOOK_CONCURRENCY;
  // An attempt never outlives the time-out by much; past this lease another notifier may take the job over.
  const leaseSeconds = Math.ceil(settings.WEBHOOK_TIMEOUT_MS / 1000) + 8;
  const inFlight = new Set<Promise<void>>();
  let lastAuditRetry = Date.now();
  // True while due jobs may be waiting for room: a finished attempt then looks for the next one at once.
  let backlog = false;

  const launch = (job: DeliveryRow) => {
    const running: Promise<void> = deliverAttempt(deps, job)
      .catch((err: unknown) => log.error({ err, webhook_id: job.webhook_id }, 'webhook attempt failed unexpectedly'))
      .finally(() => {
        inFlight.delete(running);
        if (backlog) loop.wake();
      });
    inFlight.add(running);
  };

  const loop = startWakeLoop({
    pollMs: settings.WEBHOOK_POLL_MS,
    pass: async () => {
      const room = capacity - inFlight.size;
      if (room <= 0) return;
      const jobs = await deps.deliveries.claimDue(room, leaseSeconds);
      for (const job of jobs) launch(job);
      backlog = jobs.length === room; // more may be due
      if (backlog) loop.wake();
      if (Date.now() - lastAuditRetry > AUDIT_RETRY_EVERY_MS) {
        lastAuditRetry = Date.now();
        await reportUnaudited(deps);
      }
    },
    onError: (err) => log.error({ err }, 'webhook delivery pass failed'),
  });

  return {
    async submit(job) {
      if (!loop.stopped && inFlight.size < capacity) {
        log.debug({ webhook_id: job.webhook_id, request_id: job.request_id }, 'webhook event received');
        const claimed = await deps.deliveries.addClaimed(job, leaseSeconds);
        if (claimed) launch(claimed);
      } else if (await deps.deliveries.add(job)) {
        backlog = true;
        loop.wake();
      }
    },
    async stop() {
      await loop.stop();
      await Promise.all(inFlight);
    },
  };
}
