import { type BoundHandler, handle } from '@agent-auth/bus';
import { actionsEndpoints as ep } from '@agent-auth/contracts';
import type { UseCases } from '../use-cases/use-cases.js';

/** The notifier's requests on the bus: sign one webhook attempt, record it in the request's audit trail. */
export function webhookHandlers(uc: UseCases): BoundHandler[] {
  return [
    handle(ep.signWebhook, (request) => uc.webhooks.sign(request)),
    handle(ep.recordWebhookAttempt, (attempt) => uc.webhooks.recordAttempt(attempt)),
  ];
}
