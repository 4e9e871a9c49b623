import { hash } from 'node:crypto';
import { z } from 'zod';
import { ById, defineEndpoint } from './envelope.js';
import { AgentPrincipal, NewAction } from './actions.js';
import { ActionView } from '../http/actions.js';
import { HookClient, type HookInput } from '../http/hooks.js';
import { toolCallDescription, toolCallRequest, type ToolCallSource } from '../hooks/tool-calls.js';
import { toolInputHash } from '../content-hash.js';

/**
 * actions.v1.create_tool_call: a coding agent's hook asks whether a tool may run. `join_key` names the call: a
 * retried call with the same key within ten minutes joins the request the first one made (unless it was
 * cancelled) instead of making a second one.
 */
export const NewToolCall = z.object({
  agent: AgentPrincipal,
  client: HookClient,
  action: NewAction,
  join_key: z.string().regex(/^[0-9a-f]{64}$/),
});
export type NewToolCall = z.infer<typeof NewToolCall>;

/** The request a hook call made or joined. */
export const ToolCallCreated = z.object({ joined: z.boolean(), action: ActionView });
export type ToolCallCreated = z.infer<typeof ToolCallCreated>;

/** actions.v1.cancel: an agent withdraws its own pending request. */
export const CancelRequest = z.object({ agent: AgentPrincipal, id: ById });
export type CancelRequest = z.infer<typeof CancelRequest>;

export const toolCallEndpoints = {
  createToolCall: defineEndpoint('actions', 'create_tool_call', NewToolCall, ToolCallCreated),
  cancel: defineEndpoint('actions', 'cancel', CancelRequest, ActionView),
} as const;

/**
 * The key a retried hook call shares with its first: the client's tool_use_id when it sends one, else the
 * session, the tool and the exact input.
 */
export function toolCallJoinKey(client: HookClient, input: HookInput): string {
  if (input.tool_use_id) return hash('sha256', `${client}\n${input.tool_use_id}`, 'hex');
  return toolInputHash({
    client,
    session_id: input.session_id ?? null,
    tool: input.tool_name,
    input: input.tool_input,
  });
}

/**
 * The action request of a hook call: what the tool does as a title and risk (toolCallRequest), the client, tool,
 * session and working directory in the metadata beside the whole tool input, which the content hash binds.
 * It expires when the hook stops waiting for it.
 */
export function newActionOfHook(client: ToolCallSource, input: HookInput, timeoutSeconds: number): NewAction {
  const call = { source: client, tool_name: input.tool_name, tool_input: input.tool_input, cwd: input.cwd };
  const asked = toolCallRequest(call);
  return {
    ...asked,
    description: toolCallDescription(call),
    amount: null,
    currency: 'USD',
    recipient: null,
    metadata: {
      source: client,
      hook_event_name: input.hook_event_name,
      tool_name: input.tool_name,
      session_id: input.session_id ?? null,
      cwd: input.cwd ?? null,
      tool_use_id: input.tool_use_id ?? null,
      tool_input: input.tool_input,
    },
    expires_in_seconds: Math.min(3600, Math.max(30, timeoutSeconds + 5)),
    callback_url: null,
  };
}
