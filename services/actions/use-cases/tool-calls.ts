import type { RequestContext } from '@agent-auth/bus';
import type { NewToolCall, ToolCallCreated } from '@agent-auth/contracts';
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
 * A coding agent's hook asks whether a tool may run: a retried call (same key within ten minutes, not cancelled)
 * joins the request its first call made; otherwise it is created like any request (rules, limits and grants
 * first) and, when it is left to the holder, remembered under its key. One a rule, a limit or a grant decided at
 * once is not: a retry of it is decided again the same way, and the routine call spares the remembering's own
 * commit (a plain create's shares its statement with others).
 */
export function createToolCalls(deps: Deps) {
  const { toolCalls, create, expiry, metadata } = deps;
  return async function createToolCall(call: NewToolCall, ctx: RequestContext): Promise<ToolCallCreated> {
    const earlier = await toolCalls.findJoinable(call.agent.agent_id, call.join_key);
    if (earlier) {
      const row = await expiry.current(earlier);
      return { joined: true, action: toActionView(row, metadata.open(row), metadata.openUpdatedInput(row)) };
    }
    const action = await create(call, ctx);
    if (action.status === 'pending')
      await toolCalls.record({
        request_id: action.id,
        agent_id: call.agent.agent_id,
        join_key: call.join_key,
        client: call.client,
      });
    return { joined: false, action };
  };
}
