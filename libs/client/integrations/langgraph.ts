// LangGraph JS: a node pauses with `interrupt(...)` before a tool runs; outside the graph the interrupt becomes an
// action request, and the graph resumes with `new Command({ resume })` once the holder decides: by a held wait
// here, or from the service's webhook. Requests are made outside the node on purpose: a resumed node runs again
// from its start, so a request made inside it would be made twice.
import { Command, interrupt } from '@langchain/langgraph';
import type { AgentAuthClient } from '../client.js';
import type { Action, ActionStatus } from '../types.js';
import {
  approveToolCalls,
  rejectionMessage,
  toolCallRequest,
  type ToolApprovalOptions,
  type ToolCall,
  type ToolRequestFields,
} from './tool-approval.js';

export type { ToolApprovalDecision, ToolApprovalOptions, ToolCall, ToolRequestFields } from './tool-approval.js';

/** Marks the interrupts these helpers answer; others in the same graph are left alone. */
export const APPROVAL_INTERRUPT = 'agent_auth.tool_approval';

/** The value of an approval interrupt, as stored in the checkpoint. */
export interface ApprovalInterruptValue {
  type: typeof APPROVAL_INTERRUPT;
  tool_name: string;
  arguments: unknown;
  tool_call_id?: string;
  /** Request fields chosen in the node (title, action type, amount, …). */
  request?: ToolRequestFields;
}

/** What the node receives on resume: small and JSON-only, since the checkpointer stores it. */
export interface ApprovalResume {
  approved: boolean;
  status: ActionStatus;
  /** The reason given with a denial, or null. */
  reason: string | null;
  /** Why the call may not run, worded for a model or a log (denial and reason, expiry, withdrawal); null if approved. */
  message: string | null;
  request_id: string;
  resolved_by: string | null;
}

/**
 * The resume Command: the value, or values keyed by interrupt id. No state update and no goto, typed so (never)
 * to fit any graph's `invoke`.
 */
export type ApprovalCommand = Command<ApprovalResume | Record<string, ApprovalResume>, never, never>;

/** An interrupt as `graph.invoke` returns it under `__interrupt__`, or as `getState().tasks[].interrupts` lists it. */
export interface GraphInterrupt {
  id?: string;
  value?: unknown;
}

/** Where interrupts are read from: the result of `graph.invoke` (its `__interrupt__`), or a list of interrupts. */
export type InterruptSource = readonly GraphInterrupt[] | object | null | undefined;

/** The interrupts of a source (none when the graph ran to its end). */
export function interruptsOf(source: InterruptSource): GraphInterrupt[] {
  if (!source) return [];
  if (Array.isArray(source)) return [...(source as readonly GraphInterrupt[])];
  const listed = (source as { __interrupt__?: unknown }).__interrupt__;
  return Array.isArray(listed) ? (listed as GraphInterrupt[]) : [];
}

/**
 * In a node: pauses the graph until the holder decides about this tool call, then returns the decision. Call it
 * before the tool's side effect; everything before it in the node runs again on resume.
 */
export function interruptForApproval(call: ToolCall & { request?: ToolRequestFields }): ApprovalResume {
  const value: ApprovalInterruptValue = { type: APPROVAL_INTERRUPT, tool_name: call.toolName, arguments: call.args };
  if (call.callId !== undefined) value.tool_call_id = call.callId;
  if (call.request !== undefined) value.request = call.request;
  return interrupt<ApprovalInterruptValue, ApprovalResume>(value);
}

/** Whether an interrupt is one of interruptForApproval's. */
export function isApprovalInterrupt(item: GraphInterrupt): item is GraphInterrupt & { value: ApprovalInterruptValue } {
  const value = item.value as Partial<ApprovalInterruptValue> | undefined;
  return value?.type === APPROVAL_INTERRUPT && typeof value.tool_name === 'string';
}

function toolCallOf(value: ApprovalInterruptValue): ToolCall {
  return { toolName: value.tool_name, args: value.arguments, callId: value.tool_call_id };
}

/** The resume value of a final request, or of the webhook body (the same fields, but no reason). */
export function resumeValueOf(
  action: Pick<Action, 'id' | 'status' | 'resolved_by'> & { reason?: string | null },
): ApprovalResume {
  const approved = action.status === 'approved';
  const reason = action.reason ?? null;
  return {
    approved,
    status: action.status,
    reason,
    message: approved ? null : rejectionMessage({ reason, action }),
    request_id: action.id,
    resolved_by: action.resolved_by ?? null,
  };
}

/** The resume Command for answered interrupts, keyed by interrupt id (a lone interrupt without id: the bare value). */
export function resumeCommand(
  answers: ReadonlyArray<{ interrupt: GraphInterrupt; resume: ApprovalResume }>,
): ApprovalCommand {
  const only = answers.length === 1 ? answers[0]! : undefined;
  if (only && only.interrupt.id === undefined)
    return new Command<ApprovalResume, never, never>({ resume: only.resume });
  const byId: Record<string, ApprovalResume> = {};
  for (const { interrupt: item, resume } of answers) {
    if (item.id === undefined) throw new TypeError('Several interrupts without ids cannot be resumed separately');
    byId[item.id] = resume;
  }
  return new Command<Record<string, ApprovalResume>, never, never>({ resume: byId });
}

/**
 * Held wait: asks the holder about every approval interrupt (all at once), waits for the answers and returns the
 * Command that resumes the graph: `graph.invoke(await approveInterrupts(client, result), config)`.
 * Undefined when none of the interrupts is an approval interrupt.
 */
export async function approveInterrupts(
  client: AgentAuthClient,
  source: InterruptSource,
  options: ToolApprovalOptions = {},
): Promise<ApprovalCommand | undefined> {
  const mine = interruptsOf(source).filter(isApprovalInterrupt);
  if (mine.length === 0) return undefined;
  const calls = mine.map((item) => toolCallOf(item.value));
  // The fields the node chose, found again by the call object the core hands back to `describe`.
  const fromNode = new Map(calls.map((call, i) => [call, mine[i]!.value.request]));
  const decisions = await approveToolCalls(client, calls, {
    ...options,
    describe: (call) => ({ ...fromNode.get(call), ...options.describe?.(call) }),
    framework: 'langgraph',
  });
  return resumeCommand(mine.map((item, i) => ({ interrupt: item, resume: resumeValueOf(decisions[i]!.action) })));
}

/** An interrupt's request, made without waiting (for the webhook flow). */
export interface InterruptRequest {
  interrupt: GraphInterrupt & { value: ApprovalInterruptValue };
  action: Action;
}

/**
 * Webhook flow, first half: makes the action request of every approval interrupt with a `callback_url` (built per
 * interrupt, so it can name the thread and the interrupt id) and returns at once. A request a rule or limit decided
 * at creation is already final: resume it now with `resumeCommand([{ interrupt, resume: resumeValueOf(action) }])`.
 */
export async function requestInterruptApprovals(
  client: AgentAuthClient,
  source: InterruptSource,
  options: { callbackUrl: (item: GraphInterrupt) => string; describe?: ToolApprovalOptions['describe'] },
): Promise<InterruptRequest[]> {
  const mine = interruptsOf(source).filter(isApprovalInterrupt);
  return Promise.all(
    mine.map(async (item) => {
      const call = toolCallOf(item.value);
      const fields = { ...item.value.request, ...options.describe?.(call), callback_url: options.callbackUrl(item) };
      return { interrupt: item, action: await client.requestAction(toolCallRequest(call, 'langgraph', fields)) };
    }),
  );
}

/** The fields of the service's webhook body these helpers read (verify its signature before trusting it). */
export interface ResolvedWebhookBody {
  id: string;
  status: ActionStatus;
  resolved_by: string | null;
  reason?: string | null;
}

/**
 * Webhook flow, second half: the resume Command for one interrupt from the verified webhook body of its request.
 * The body carries no denial reason; to hand the node the holder's words, pass `await client.getStatus(body.id)`
 * instead of the body.
 */
export function resumeFromWebhook(body: ResolvedWebhookBody, interruptId: string | undefined): ApprovalCommand {
  return resumeCommand([{ interrupt: { id: interruptId }, resume: resumeValueOf(body) }]);
}
