import { cibaEndpoints } from '@agent-auth/contracts';
import { isAppError } from '@agent-auth/errors';
import { OutboundError } from '@agent-auth/outbound';
import { describeFailure } from '../adapters/webhook-poster.js';
import type { AttemptResult } from '../domain/retry-policy.js';
import type { DeliveryRow } from '../store/deliveries.js';
import type { NotifierDeps } from './deps.js';

const TOKEN_RETRY_SECONDS = 2;
const USER_AGENT = 'agent-auth-ciba/1';

type Finish = (result: AttemptResult, latencyMs: number, permanent: boolean) => Promise<void>;

/**
 * One attempt of a CIBA ping (CIBA 10.2): `{"auth_req_id"}` POSTed to the client's notification endpoint with its
 * client_notification_token as the bearer token, which only the actions service can open. Retried, recorded and
 * audited as a webhook attempt is.
 */
export async function deliverPing(
  deps: NotifierDeps,
  job: DeliveryRow,
  endpoint: string,
  finish: Finish,
): Promise<void> {
  let ping: { auth_req_id: string; client_notification_token: string };
  try {
    ping = await deps.bus.request(cibaEndpoints.ping, { agent_id: job.agent_id, request_id: job.request_id });
  } catch (err) {
    if (isAppError(err) && err.status < 500)
      return finish({ status: null, error: `the ping cannot be made: ${err.detail}` }, 0, true);
    deps.log.warn({ err, webhook_id: job.webhook_id }, 'CIBA ping token unavailable; trying again shortly');
    await deps.deliveries.postpone(job.webhook_id, TOKEN_RETRY_SECONDS);
    return;
  }
  const started = performance.now();
  let result: AttemptResult;
  let refused = false;
  try {
    const res = await deps.poster.request({
      url: endpoint,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        authorization: `Bearer ${ping.client_notification_token}`,
      },
      body: JSON.stringify({ auth_req_id: ping.auth_req_id }),
    });
    result = { status: res.statusCode, error: null };
  } catch (err) {
    result = { status: null, error: describeFailure(err) };
    if (err instanceof OutboundError && err.kind === 'refused') refused = true;
  }
  await finish(result, Math.round(performance.now() - started), refused);
}
