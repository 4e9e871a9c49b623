import type { ActionEvent } from '@agent-auth/contracts';
import type { PushProvider } from '../adapters/push.js';
import { pushMessageOf } from '../domain/push-messages.js';
import type { NotifierDeps } from './deps.js';

/**
 * Whose devices hear of an event, when not the whole account's: an escalation's people; a routed creation's
 * approvers when the rule named them by id (a role is not known here: those go to the account's devices, and the
 * stream and GET /pending show the request to its approvers only).
 */
export function pushedMembers(event: ActionEvent): string[] | null {
  if (event.escalation) return event.escalation.members.map((m) => m.member_id);
  if (event.approvers?.every((a) => a.startsWith('mem_'))) return event.approvers;
  return null;
}

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
  const members = pushedMembers(event);
  const subscriptions = members
    ? await deps.pushSubscriptions.forMembers(event.account_id, members)
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
