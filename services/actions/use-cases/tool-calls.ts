import type { RequestContext } from '@agent-auth/bus';
import type { ActionView, NewToolCall, ToolCallCreated } from '@agent-auth/contracts';
import { toActionView } from '../domain/views.js';
import type { ToolCallStore } from '../store/tool-calls.js';
import type { createActionCreation } from './create-action.js';
import type { Expiry } from './expiry.js';
import type { MetadataSeal } from './metadata.js';

interface Deps {
  toolCalls: ToolCallStore;
  create: ReturnType<typeof createActionCreation>;
  expiry: Expiry;
  metadata: MetadataSeal;
}

/**
 * A coding agent's hook asks whether a tool may run. It is created like any request, rules, limits and grants
 * first; one they leave to the holder first looks for the request a retry of the same call (same key within ten
 * minutes, not cancelled) made, and joins it; a new one is remembered under its key. A call the policy decides at
 * once is neither looked up nor remembered: a retry of it is decided again the same way, and the routine call costs
 * what a plain create costs.
 */
export function createToolCalls(deps: Deps) {
  const { toolCalls, create, expiry, metadata } = deps;

  /** The request an earlier call with the same key made, as it stands now. */
  const earlierCall = async (call: NewToolCall): Promise<ActionView | undefined> => {
    const earlier = await toolCalls.findJoinable(call.agent.agent_id, call.join_key);
    if (!earlier) return undefined;
    const row = await expiry.current(earlier);
    return toActionView(row, metadata.open(row), metadata.openUpdatedInput(row));
  };

  return async function createToolCall(call: NewToolCall, ctx: RequestContext): Promise<ToolCallCreated> {
    let joined = false;
    const action = await create(
      {
        ...call,
        joinPending: async () => {
          const earlier = await earlierCall(call);
          joined = earlier !== undefined;
          return earlier;
        },
      },
      ctx,
    );
    if (!joined && action.status === 'pending')
      await toolCalls.record({
        request_id: action.id,
        agent_id: call.agent.agent_id,
        join_key: call.join_key,
        client: call.client,
      });
    return { joined, action };
  };
}
