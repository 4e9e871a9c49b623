import { type ActionEvent, actionsEndpoints } from '@agent-auth/contracts';
import type { PushProvider } from '../adapters/push.js';
import { pushMessageOf } from '../domain/push-messages.js';
import type { NotifierDeps } from './deps.js';

/**
 * Whose devices hear of an event, when not the whole account's: an escalation's people; a routed creation's
 * approvers as its rule named them (member ids, `role:<role>`).
 */
export function pushedMembers(event: ActionEvent): string[] | null {
  if (event.escalation) return event.escalation.members.map((m) => m.member_id);
  if (event.approvers?.length) return event.approvers;
  return null;
}

/** The member ids behind a routing: roles are asked of the actions service (who holds them now). */
async function memberIdsOf(deps: Pick<NotifierDeps, 'bus'>, accountId: string, refs: string[]): Promise<string[]> {
  if (!refs.some((ref) => ref.startsWith('role:'))) return refs;
  const { member_ids } = await deps.bus.request(actionsEndpoints.membersNamed, { account_id: accountId, refs });
  return member_ids;
}

/**
 * Pushes what a phone should hear of an event (a new pending request, its escalation, or its outcome: see
 * pushMessageOf) to every subscription of the account (an escalation: of the members it went to). Best effort: a push that fails is logged, never retried (the live stream and
 * GET /pending remain).
 */
export async function pushToDevices(
  deps: Pick<NotifierDeps, 'pushSubscriptions' | 'log' | 'bus'>,
  push: PushProvider,
  event: ActionEvent,
): Promise<void> {
  const message = pushMessageOf(event);
  if (!message) return;
  const refs = pushedMembers(event);
  const subscriptions = refs
    ? await deps.pushSubscriptions.forMembers(event.account_id, await memberIdsOf(deps, event.account_id, refs))
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
