import { webhookPayloadOf, type ActionEvent } from '@agent-auth/contracts';
import type { NotifierDeps } from './deps.js';
import type { DeliveryLoop } from './delivery-loop.js';

/**
 * Handles one action event from the durable stream. A resolution with a callback_url becomes a delivery job
 * (recorded before the event is acknowledged, keyed by the event id, so a redelivered event adds nothing) and
 * its first attempt starts at once; a new
 * pending request is pushed to the account's devices when a push provider is configured.
 */
export function actionEventHandler(deps: NotifierDeps, deliveries: Pick<DeliveryLoop, 'submit'>) {
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
    if (event.type === 'action.created' && deps.push) await pushToDevices(deps, event);
  };
}

/** Best effort: a push that fails is logged, never retried (the live stream and GET /pending remain). */
async function pushToDevices(deps: NotifierDeps, event: ActionEvent): Promise<void> {
  const push = deps.push!;
  const subscriptions = await deps.pushSubscriptions.forAccount(event.account_id);
  const message = {
    title: `Approval requested: ${event.action.title}`.slice(0, 120),
    body: `${event.action.action_type}, ${event.action.risk_level} risk${event.action.amount !== null ? `, ${event.action.amount} ${event.action.currency}` : ''}`,
    data: { type: event.type, request_id: event.action.id },
  };
  await Promise.all(
    subscriptions.map(async (s) => {
      try {
        if ((await push.send(s, message)) === 'gone') await deps.pushSubscriptions.remove(s.endpoint, s.account_id);
      } catch (err) {
        deps.log.warn({ err, request_id: event.action.id, device_ref: s.device_ref }, 'push notification failed');
      }
    }),
  );
}
