// The shared core of the agent-framework integrations: one tool call becomes one action request, the holder decides
// on their phone, and the framework gets a plain decision. It imports no framework, so the subpath entries can
// depend on theirs while this stays dependency-free.
import type { AgentAuthClient, WaitOptions } from '../client.js';
import { FINAL_STATUSES } from '../types.js';
import type { Action, ActionRequestInput } from '../types.js';

/** A tool call an agent framework wants to make. */
export interface ToolCall {
  /** The tool's name, as the model called it. */
  toolName: string;
  /** The tool's arguments, as parsed from the model's call (a JSON string that does not parse is kept as text). */
  args: unknown;
  /** The framework's id of this call, kept in the request's metadata for the holder and the audit. */
  callId?: string;
  /** The agent that made the call, when the framework names it. */
  agentName?: string;
}

/** What the holder decided about one tool call. */
export interface ToolApprovalDecision {
  /** True only when the request was approved (by the holder, a rule or a grant). */
  approved: boolean;
  /** The reason given with a denial, or null. */
  reason: string | null;
  /** The request in its final state (approved, denied, expired or cancelled). */
  action: Action;
}

/** The request fields a caller may set per tool call; metadata is merged into the tool call's own. */
export type ToolRequestFields = Partial<Omit<ActionRequestInput, 'metadata'>> & { metadata?: Record<string, unknown> };

export interface ToolApprovalOptions extends WaitOptions {
  /**
   * The request's fields for a call: action type (default `system`), title (default the call, e.g.
   * `send_email(to: "ann@example.com")`), risk level, amount, recipient, expiry, callback URL, extra metadata.
   */
  describe?: (call: ToolCall) => ToolRequestFields;
  /** Called once per call when its decision is known, before the framework is told. */
  onDecision?: (call: ToolCall, decision: ToolApprovalDecision) => void;
}

const TITLE_MAX = 200;

/** A readable one-line title for a tool call: `name(key: value, …)`, cut to the service's 200 characters. */
export function toolCallTitle(call: Pick<ToolCall, 'toolName' | 'args'>): string {
  const { toolName, args } = call;
  let inner: string;
  if (args && typeof args === 'object' && !Array.isArray(args)) {
    inner = Object.entries(args as Record<string, unknown>)
      .map(([key, value]) => `${key}: ${JSON.stringify(value) ?? String(value)}`)
      .join(', ');
  } else inner = args === undefined ? '' : (JSON.stringify(args) ?? String(args));
  const title = `${toolName}(${inner})`;
  return title.length <= TITLE_MAX ? title : `${title.slice(0, TITLE_MAX - 1)}…`;
}

/** The arguments of a call given as a JSON string (the usual wire form), parsed; text that is not JSON as is. */
export function parseToolArguments(text: string | undefined): unknown {
  if (text === undefined || text === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The action request for a tool call: the caller's fields over the defaults, the call itself in the metadata. */
export function toolCallRequest(call: ToolCall, framework: string, fields: ToolRequestFields = {}): ActionRequestInput {
  const metadata: Record<string, unknown> = { framework, tool: call.toolName, arguments: call.args };
  if (call.callId !== undefined) metadata.tool_call_id = call.callId;
  if (call.agentName !== undefined) metadata.agent_name = call.agentName;
  return {
    action_type: 'system',
    title: toolCallTitle(call),
    ...fields,
    metadata: { ...metadata, ...fields.metadata },
  };
}

/** The decision a final request stands for. */
export function decisionOf(action: Action): ToolApprovalDecision {
  return { approved: action.status === 'approved', reason: action.reason ?? null, action };
}

/** The text a framework hands the model for a call that was not approved: why it did not run. */
export function rejectionMessage(decision: Pick<ToolApprovalDecision, 'reason'> & { action: Pick<Action, 'status'> }) {
  const { reason, action } = decision;
  if (action.status === 'expired') return 'Not approved: the approval request expired before anyone answered.';
  if (action.status === 'cancelled') return 'Not approved: the approval request was withdrawn.';
  return reason ? `Denied by the approver: ${reason}` : 'Denied by the approver.';
}

/** Withdraws a request nobody waits for any more; the holder stops seeing it. Best effort: it may be decided already. */
async function withdraw(client: AgentAuthClient, id: string): Promise<void> {
  try {
    await client.cancelAction(id, { signal: AbortSignal.timeout(10_000) });
  } catch {
    // Decided meanwhile (409), or the service is unreachable: either way there is nothing more to do here.
  }
}

/**
 * Asks the holder about one tool call and waits for the answer. A rule or spending limit may decide at creation.
 * When the wait ends without an answer (the signal aborts, `timeoutMs` passes, the service fails), the request is
 * withdrawn so the holder is not left with a question nobody waits for, and the error is rethrown.
 */
export async function approveToolCall(
  client: AgentAuthClient,
  call: ToolCall,
  options: ToolApprovalOptions & { framework?: string } = {},
): Promise<ToolApprovalDecision> {
  const { describe, onDecision, framework = 'custom', ...wait } = options;
  const created = await client.requestAction(toolCallRequest(call, framework, describe?.(call)), {
    signal: wait.signal,
  });
  let final = created;
  if (!FINAL_STATUSES.includes(created.status)) {
    try {
      final = await client.waitForResult(created.id, wait);
    } catch (err) {
      await withdraw(client, created.id);
      throw err;
    }
  }
  const decision = decisionOf(final);
  onDecision?.(call, decision);
  return decision;
}

/**
 * Asks about several tool calls at once (the holder sees them side by side) and waits for every answer, in the
 * calls' order. If one fails, the others stop waiting and their requests are withdrawn.
 */
export async function approveToolCalls(
  client: AgentAuthClient,
  calls: readonly ToolCall[],
  options: ToolApprovalOptions & { framework?: string } = {},
): Promise<ToolApprovalDecision[]> {
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  // allSettled, not all: the siblings' withdrawals finish before the error reaches the caller.
  const settled = await Promise.allSettled(
    calls.map((call) =>
      approveToolCall(client, call, { ...options, signal }).catch((err: unknown) => {
        stop.abort(err);
        throw err;
      }),
    ),
  );
  const failed = settled.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<ToolApprovalDecision>).value);
}
