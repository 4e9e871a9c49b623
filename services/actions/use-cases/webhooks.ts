import type { SignWebhookRequest, WebhookAttempt } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { webhookSignature } from '../domain/webhook-signature.js';
import type { ActionsDeps } from './deps.js';

/** The webhook body's request id, or undefined when the body is not a webhook of a request. */
function requestIdOf(body: string): unknown {
  try {
    return (JSON.parse(body) as { id?: unknown }).id;
  } catch {
    return undefined;
  }
}

const auditEvents: Record<WebhookAttempt['outcome'], string> = {
  delivered: 'webhook_delivered',
  failed: 'webhook_failed',
  retrying: 'webhook_attempt_failed',
};

/**
 * What the notifier needs from the holder of the agents' webhook secrets: a signature per attempt (the secret
 * never leaves this service), and a place for each attempt in the request's audit trail.
 */
export function createWebhookSigning(deps: Pick<ActionsDeps, 'identities' | 'requests' | 'keyring'>) {
  return {
    async sign({ agent_id, request_id, webhook_id, timestamp, body }: SignWebhookRequest) {
      // Signs only the webhook of one of the agent's own requests, not arbitrary text.
      if (requestIdOf(body) !== request_id) throw errors.webhookOfOtherRequest();
      const enc = await deps.identities.webhookSecretFor(agent_id, request_id);
      if (!enc) throw errors.actionNotFound(request_id);
      const secret = deps.keyring.decrypt(enc, `agent:${agent_id}:webhook_secret`);
      return { signature: webhookSignature(secret, webhook_id, timestamp, body) };
    },

    async recordAttempt(attempt: WebhookAttempt) {
      const { request_id, ...detail } = attempt;
      return { recorded: await deps.requests.auditWebhookAttempt(request_id, auditEvents[attempt.outcome], detail) };
    },
  };
}
