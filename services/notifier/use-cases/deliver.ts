import { actionsEndpoints as ep, cibaPingEndpointOf } from '@agent-auth/contracts';
import { isAppError } from '@agent-auth/errors';
import { OutboundError } from '@agent-auth/outbound';
import type { DeliveryRow } from '../store/deliveries.js';
import type { NotifierDeps } from './deps.js';
import { recordWebhookAttempt } from '@agent-auth/metrics';
import { describeFailure } from '../adapters/webhook-poster.js';
import { type AttemptResult, nextStep } from '../domain/retry-policy.js';
import { deliverPing } from './deliver-ping.js';

const SIGNING_RETRY_SECONDS = 2;
const USER_AGENT = 'agent-auth-webhooks/1';

/** One attempt of one webhook, recorded whatever happens. */
export async function deliverAttempt(deps: NotifierDeps, job: DeliveryRow): Promise<void> {
  // A ping-mode CIBA request's callback_url is its client's notification endpoint, marked (libs/contracts).
  const pingEndpoint = cibaPingEndpointOf(job.callback_url);
  if (pingEndpoint !== undefined)
    return deliverPing(deps, job, pingEndpoint, (result, latencyMs, permanent) =>
      finish(deps, job, result, latencyMs, permanent),
    );
  const timestamp = Math.floor(Date.now() / 1000);
  let signature: string;
  try {
    ({ signature } = await deps.bus.request(ep.signWebhook, {
      agent_id: job.agent_id,
      request_id: job.request_id,
      webhook_id: job.webhook_id,
      timestamp,
      body: job.body,
    }));
  } catch (err) {
    if (isAppError(err) && err.status < 500)
      return finish(deps, job, { status: null, error: `the webhook cannot be signed: ${err.detail}` }, 0, true);
    // The signer is unavailable: that is not the receiver's failure, so the attempt does not count.
    deps.log.warn({ err, webhook_id: job.webhook_id }, 'webhook signing unavailable; trying again shortly');
    await deps.deliveries.postpone(job.webhook_id, SIGNING_RETRY_SECONDS);
    return;
  }
  deps.log.debug(
    { webhook_id: job.webhook_id, request_id: job.request_id, attempt: job.attempts },
    'webhook signed; posting',
  );
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
async function finish(
  deps: NotifierDeps,
  job: DeliveryRow,
  result: AttemptResult,
  latencyMs: number,
  permanent: boolean,
): Promise<void> {
  const step = permanent
    ? { outcome: 'failed' as const, reason: result.error ?? 'failed' }
    : nextStep(result, job.attempts, deps.settings.WEBHOOK_RETRY_SCHEDULE, new Date());
  const record = {
    webhook_id: job.webhook_id,
    attempt: job.attempts,
    status_code: result.status,
    latency_ms: latencyMs,
    error:
      result.error ??
      (step.outcome === 'failed'
        ? step.reason
        : result.status !== null && step.outcome === 'retrying'
          ? `the receiver answered ${result.status}`
          : null),
    outcome: step.outcome,
    next_attempt_at: step.outcome === 'retrying' ? step.at : null,
  };
  const id = await deps.deliveries.recordAttempt(record);
  recordWebhookAttempt(step.outcome);
  const logged = {
    webhook_id: job.webhook_id,
    request_id: job.request_id,
    attempt: job.attempts,
    status: result.status,
    latency_ms: latencyMs,
    outcome: step.outcome,
  };
  if (step.outcome === 'delivered') deps.log.info(logged, 'webhook delivered');
  else
    deps.log.warn(
      { ...logged, error: record.error },
      step.outcome === 'failed' ? 'webhook failed for good' : 'webhook attempt failed; will retry',
    );
  await audit(deps, id, { request_id: job.request_id, ...record });
}

async function audit(
  deps: NotifierDeps,
  id: string,
  a: {
    request_id: string;
    webhook_id: string;
    attempt: number;
    outcome: 'delivered' | 'retrying' | 'failed';
    status_code: number | null;
    latency_ms: number;
    error: string | null;
    next_attempt_at: Date | null;
  },
): Promise<void> {
  try {
    await deps.bus.request(ep.recordWebhookAttempt, {
      ...a,
      next_attempt_at: a.next_attempt_at?.toISOString() ?? null,
    });
    await deps.deliveries.markAudited([id]);
  } catch (err) {
    // Reported again later by reportUnaudited; the actions side ignores a second report of one attempt.
    deps.log.warn({ err, webhook_id: a.webhook_id }, 'could not add a webhook attempt to the audit trail yet');
  }
}

/** Reports attempts whose audit entry could not be written at the time (the actions service was away). */
export async function reportUnaudited(deps: NotifierDeps): Promise<void> {
  for (const a of await deps.deliveries.unaudited(5, 100)) await audit(deps, a.id, a);
}
