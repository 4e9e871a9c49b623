import { actionsEndpoints as ep } from '@agent-auth/contracts';
import { isAppError } from '@agent-auth/errors';
import { OutboundError } from '@agent-auth/outbound';
import type { DeliveryRow } from '../store/deliveries.js';
import type { NotifierDeps } from './deps.js';
import { nextStep, type AttemptResult } from './retry-policy.js';
import { describeFailure } from './webhook-poster.js';

const SIGNING_RETRY_SECONDS = 2;
const AUDIT_RETRY_EVERY_MS = 5_000;
const USER_AGENT = 'agent-auth-webhooks/1';

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
  const { config, log } = deps;
  const capacity = config.WEBHOOK_CONCURRENCY;
  // An attempt never outlives the time-out by much; past this lease another notifier may take the job over.
  const leaseSeconds = Math.ceil(config.WEBHOOK_TIMEOUT_MS / 1000) + 8;
  const inFlight = new Set<Promise<void>>();
  let woken = true;
  let stopped = false;
  let nudge: (() => void) | null = null;
  let lastAuditRetry = Date.now();
  // True while due jobs may be waiting for room: a finished attempt then looks for the next one at once.
  let backlog = false;

  const wake = () => {
    woken = true;
    nudge?.();
  };

  const sleep = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, config.WEBHOOK_POLL_MS);
      nudge = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const launch = (job: DeliveryRow) => {
    const running: Promise<void> = attempt(deps, job)
      .catch((err: unknown) => log.error({ err, webhook_id: job.webhook_id }, 'webhook attempt failed unexpectedly'))
      .finally(() => {
        inFlight.delete(running);
        if (backlog) wake();
      });
    inFlight.add(running);
  };

  const pass = async () => {
    const room = capacity - inFlight.size;
    if (room <= 0) return;
    const jobs = await deps.deliveries.claimDue(room, leaseSeconds);
    for (const job of jobs) launch(job);
    backlog = jobs.length === room; // more may be due
    if (backlog) woken = true;
    if (Date.now() - lastAuditRetry > AUDIT_RETRY_EVERY_MS) {
      lastAuditRetry = Date.now();
      await reportUnaudited(deps);
    }
  };

  const loop = (async () => {
    while (!stopped) {
      if (!woken) await sleep();
      nudge = null;
      woken = false;
      if (stopped) break;
      await pass().catch((err: unknown) => log.error({ err }, 'webhook delivery pass failed'));
    }
  })();

  return {
    async submit(job) {
      if (!stopped && inFlight.size < capacity) {
        log.debug({ webhook_id: job.webhook_id, request_id: job.request_id }, 'webhook event received');
        const claimed = await deps.deliveries.addClaimed(job, leaseSeconds);
        if (claimed) launch(claimed);
      } else if (await deps.deliveries.add(job)) {
        backlog = true;
        wake();
      }
    },
    async stop() {
      stopped = true;
      nudge?.();
      await loop;
      await Promise.all(inFlight);
    },
  };
}

/** One attempt of one webhook, recorded whatever happens. */
async function attempt(deps: NotifierDeps, job: DeliveryRow): Promise<void> {
  const timestamp = Math.floor(Date.now() / 1000);
  let signature: string;
  try {
    ({ signature } = await deps.bus.request(ep.signWebhook, { agent_id: job.agent_id, request_id: job.request_id, webhook_id: job.webhook_id, timestamp, body: job.body }));
  } catch (err) {
    if (isAppError(err) && err.status < 500) return finish(deps, job, { status: null, error: `the webhook cannot be signed: ${err.detail}` }, 0, true);
    // The signer is unavailable: that is not the receiver's failure, so the attempt does not count.
    deps.log.warn({ err, webhook_id: job.webhook_id }, 'webhook signing unavailable; trying again shortly');
    await deps.deliveries.postpone(job.webhook_id, SIGNING_RETRY_SECONDS);
    return;
  }
  deps.log.debug({ webhook_id: job.webhook_id, request_id: job.request_id, attempt: job.attempts }, 'webhook signed; posting');
  const started = performance.now();
  let result: AttemptResult;
  let refused = false;
  try {
    const res = await deps.poster.request({
      url: job.callback_url,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'webhook-id': job.webhook_id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signature,
      },
      body: job.body,
    });
    result = { status: res.statusCode, error: null };
  } catch (err) {
    result = { status: null, error: describeFailure(err) };
    // A target the outbound rules refuse (address class, scheme) will be refused on every retry: fail it now.
    if (err instanceof OutboundError && err.kind === 'refused') refused = true;
  }
  await finish(deps, job, result, Math.round(performance.now() - started), refused);
}

/** Records an attempt, schedules what follows, and reports it to the request's audit trail. */
async function finish(deps: NotifierDeps, job: DeliveryRow, result: AttemptResult, latencyMs: number, permanent: boolean): Promise<void> {
  const step = permanent ? { outcome: 'failed' as const, reason: result.error ?? 'failed' } : nextStep(result, job.attempts, deps.config.WEBHOOK_RETRY_SCHEDULE, new Date());
  const record = {
    webhook_id: job.webhook_id,
    attempt: job.attempts,
    status_code: result.status,
    latency_ms: latencyMs,
    error: result.error ?? (step.outcome === 'failed' ? step.reason : result.status !== null && step.outcome === 'retrying' ? `the receiver answered ${result.status}` : null),
    outcome: step.outcome,
    next_attempt_at: step.outcome === 'retrying' ? step.at : null,
  };
  const id = await deps.deliveries.recordAttempt(record);
  const logged = { webhook_id: job.webhook_id, request_id: job.request_id, attempt: job.attempts, status: result.status, latency_ms: latencyMs, outcome: step.outcome };
  if (step.outcome === 'delivered') deps.log.info(logged, 'webhook delivered');
  else deps.log.warn({ ...logged, error: record.error }, step.outcome === 'failed' ? 'webhook failed for good' : 'webhook attempt failed; will retry');
  await audit(deps, id, { request_id: job.request_id, ...record });
}

async function audit(deps: NotifierDeps, id: string, a: { request_id: string; webhook_id: string; attempt: number; outcome: 'delivered' | 'retrying' | 'failed'; status_code: number | null; latency_ms: number; error: string | null; next_attempt_at: Date | null }): Promise<void> {
  try {
    await deps.bus.request(ep.recordWebhookAttempt, { ...a, next_attempt_at: a.next_attempt_at?.toISOString() ?? null });
    await deps.deliveries.markAudited([id]);
  } catch (err) {
    // Reported again later by reportUnaudited; the actions side ignores a second report of one attempt.
    deps.log.warn({ err, webhook_id: a.webhook_id }, 'could not add a webhook attempt to the audit trail yet');
  }
}

/** Reports attempts whose audit entry could not be written at the time (the actions service was away). */
async function reportUnaudited(deps: NotifierDeps): Promise<void> {
  for (const a of await deps.deliveries.unaudited(5, 100)) await audit(deps, a.id, a);
}
