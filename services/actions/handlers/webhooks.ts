import { actionsEndpoints as ep } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { handle, type BoundHandler } from '@agent-auth/bus';
import type { ActionsDeps } from './deps.js';
import { webhookSignature } from './webhook-signature.js';

/** The webhook body's request id, or undefined when the body is not a webhook of a request. */
function requestIdOf(body: string): unknown {
  try {
    return (JSON.parse(body) as { id?: unknown }).id;
  } catch {
    return undefined;
  }
}

/**
 * What the notifier needs from the holder of the agents' webhook secrets: a signature per attempt (the secret
 * never leaves this service), and a place for each attempt in the request's audit trail.
 */
export function webhookHandlers(deps: ActionsDeps): BoundHandler[] {
  return [
    handle(ep.signWebhook, async ({ agent_id, request_id, webhook_id, timestamp, body }) => {
      // Signs only the webhook of one of the agent's own requests, not arbitrary text.
      if (requestIdOf(body) !== request_id) throw errors.badRequest('body: must be the webhook of request_id');
      const enc = await deps.identities.webhookSecretFor(agent_id, request_id);
      if (!enc) throw errors.notFound(`Request '${request_id}' of agent '${agent_id}' not found`);
      const secret = deps.keyring.decrypt(enc, `agent:${agent_id}:webhook_secret`);
      return { signature: webhookSignature(secret, webhook_id, timestamp, body) };
    }),

    handle(ep.recordWebhookAttempt, async (attempt) => {
      const event = attempt.outcome === 'delivered' ? 'webhook_delivered' : attempt.outcome === 'failed' ? 'webhook_failed' : 'webhook_attempt_failed';
      const { request_id, ...detail } = attempt;
      return { recorded: await deps.requests.auditWebhookAttempt(request_id, event, detail) };
    }),
  ];
}
