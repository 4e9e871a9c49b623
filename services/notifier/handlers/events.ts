import { type ActionEvent, webhookPayloadOf } from '@agent-auth/contracts';
import type { NotifierDeps } from '../use-cases/deps.js';
import { pushToDevices } from '../use-cases/notify-devices.js';
import type { DeliveryLoop } from '../workers/delivery-loop.js';
import type { Emails } from '../use-cases/emails.js';

/**
 * Handles one action event from the durable stream. A resolution with a callback_url becomes a delivery job
 * (recorded before the event is acknowledged, keyed by the event id, so a redelivered event adds nothing) and
 * its first attempt starts at once. With a push provider, a new pending request is pushed to the account's devices,
 * and so is its outcome (so the notification is cleared on every phone); an escalation goes to the people it was
 * handed to, by push and (with SMTP_URL) by email.
 */
export function actionEventHandler(
  deps: NotifierDeps,
  deliveries: Pick<DeliveryLoop, 'submit'>,
  emails?: Pick<Emails, 'queueEscalation'>,
) {
  return async (event: ActionEvent): Promise<void> => {
    if (event.type === 'action.resolved' && event.callback_url) {
      await deliveries.submit({
        webhook_id: event.id,
        request_id: event.action.id,
        account_id: event.account_id,
        agent_id: event.agent_id,
        callback_url: event.callback_url,
        body: JSON.stringify(webhookPayloadOf(event.action)),
      });
    }
    // An escalation's emails are queued before the event is acknowledged (a redelivery queues none twice).
    if (event.type === 'action.escalated') await emails?.queueEscalation(event);
    if (deps.push) await pushToDevices(deps, deps.push, event);
  };
}
