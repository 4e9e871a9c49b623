import type { Bus } from '@agent-auth/bus';
import {
  type ActionView,
  actionsEndpoints,
  type AgentPrincipal,
  type HookClient,
  type HookInput,
  type HookQuery,
  type HookVerdict,
  hookAnswer,
  newActionOfHook,
  toolCallEndpoints,
  toolCallJoinKey,
} from '@agent-auth/contracts';
import { holdWhilePending, type WaitRegistry } from './held-waits.js';

/** One hook call: the client, its agent, its input as sent and how long it may be held. */
export interface HookCall {
  client: HookClient;
  agent: AgentPrincipal;
  input: HookInput;
  query: HookQuery;
  requestId: string;
  /** Registers what to call when the client goes away before the answer. */
  onClientGone: (listener: () => void) => void;
}

/** What a hook answers for a request in its final state, or still pending when the wait ended. */
export function verdictOf(action: ActionView, query: HookQuery): HookVerdict {
  switch (action.status) {
    case 'approved':
      return {
        decision: 'allow',
        reason: `Approved by the holder (${action.resolved_by ?? 'device'})`,
        updated_input: action.updated_input ?? null,
      };
    case 'denied':
      return {
        decision: 'deny',
        message: action.reason
          ? `Denied by the holder: ${action.reason}`
          : action.resolved_by === 'user'
            ? 'Denied by the holder on their device.'
            : `Denied by policy (${action.resolved_by ?? 'rule'}).`,
      };
    case 'cancelled':
      return { decision: 'deny', message: 'The approval request was cancelled.' };
    default: {
      // Still pending when the hook's time ran out, or expired: nobody decided.
      const waited = `No decision from the holder within ${query.timeout} s`;
      return query.on_timeout === 'ask'
        ? { decision: 'ask', reason: `${waited}: asking here instead.` }
        : { decision: 'deny', message: `${waited}: denied (fail closed).` };
    }
  }
}

/**
 * Creates (or joins) the request of a hook call, holds on until it leaves pending, the time-out passes or the
 * client goes away, and answers in the client's own hook output. A request nobody decided is cancelled, whether the
 * time ran out or the caller gave up, so the holder no longer sees it.
 */
export function createHookCalls(deps: { bus: Bus; waits: WaitRegistry }) {
  const { bus, waits } = deps;
  const cancel = (agent: AgentPrincipal, id: string, requestId: string) =>
    bus.request(toolCallEndpoints.cancel, { agent, id }, { requestId }).catch(() => undefined);

  return async function answerHookCall(call: HookCall): Promise<Record<string, unknown> | null> {
    const { agent, input, query, requestId } = call;
    const created = await bus.request(
      toolCallEndpoints.createToolCall,
      {
        agent,
        client: call.client,
        action: newActionOfHook(call.client, input, query.timeout),
        join_key: toolCallJoinKey(call.client, input),
      },
      { requestId },
    );
    // Decided already (by a rule, a limit or a grant, or the joined request by its holder): the answer is complete,
    // edited input included, so it is answered at once without another request to the actions service.
    if (created.action.status !== 'pending')
      return hookAnswer(call.client, input.hook_event_name, verdictOf(created.action, query));
    const id = created.action.id;
    const read = () => bus.request(actionsEndpoints.get, { agent, id }, { requestId });
    // The wait reads the request again once it is registered: the create's answer is older than the registration, and
    // a decision in between (its event already gone by) would otherwise be seen only when the wait ran out.
    let final = await holdWhilePending({
      registry: waits,
      requestId: id,
      seconds: query.timeout,
      read,
      onClientGone: call.onClientGone,
      // An approval with changes: the edited input is read from the request (the event only says there is one).
      readAfter: (resolution) => resolution.action.status === 'approved' && resolution.outcome?.edited !== false,
    });
    if (final.status === 'pending') {
      const after = await cancel(agent, id, requestId);
      // Decided in the moment before the cancel: that decision stands.
      if (after && after.status !== 'cancelled') final = after;
    }
    return hookAnswer(call.client, input.hook_event_name, verdictOf(final, query));
  };
}
export type AnswerHookCall = ReturnType<typeof createHookCalls>;
