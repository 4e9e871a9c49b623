import type { ActionEvent } from '@agent-auth/contracts';
import type { PushProvider } from '../adapters/push.js';
import { pushMessageOf } from '../domain/push-messages.js';
import type { NotifierDeps } from './deps.js';

/**
 * Pushes what a phone should hear of an event (a new pending request, its escalation, or its outcome: see
 * pushMessageOf) to every subscription of the account (an escalation: of the members it went to). Best effort: a push that fails is logged, never retried (the live stream and
 * GET /pending remain).
 */
export async function pushToDevices(
  deps: Pick<NotifierDeps, 'pushSubscriptions' | 'log'>,
  push: PushProvider,
  event: ActionEvent,
): Promise<void> {
  const message = pushMessageOf(event);
  if (!message) return;
  // An escalation is pushed to the devices of the people it went to; anything else to the account's devices.
  const subscriptions = event.escalation
    ? await deps.pushSubscriptions.forMembers(
        event.account_id,
        event.escalation.members.map((m) => m.member_id),
      )
    : await deps.pushSubscriptions.forAccount(event.account_id);
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
