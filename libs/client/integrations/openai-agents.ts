// OpenAI Agents JS: a run stops with interruptions for tools that need approval; each one becomes an action
// request, and the holder's answer is written into the run state with approve()/reject() for `run(agent, state)`.
import type { RunToolApprovalItem } from '@openai/agents';
import type { AgentAuthClient } from '../client.js';
import {
  approveToolCalls,
  parseToolArguments,
  rejectionMessage,
  type ToolApprovalDecision,
  type ToolApprovalOptions,
  type ToolCall,
} from './tool-approval.js';

export type { ToolApprovalDecision, ToolApprovalOptions, ToolCall, ToolRequestFields } from './tool-approval.js';

/** The part of a RunState these helpers use (structural, so any RunState type parameters fit). */
export interface ApprovalRunState {
  approve(item: RunToolApprovalItem, options?: { alwaysApprove?: boolean }): void;
  reject(item: RunToolApprovalItem, options?: { alwaysReject?: boolean; message?: string }): void;
}

/** A run result (or streamed result) that may have stopped for approvals. */
export interface InterruptedRun<TState extends ApprovalRunState> {
  interruptions: RunToolApprovalItem[];
  state: TState;
}

/** The tool call an interruption asks about: name, arguments (parsed), call id and agent. */
export function toolCallOfInterruption(item: RunToolApprovalItem): ToolCall {
  const raw = item.rawItem as { callId?: unknown; id?: unknown; action?: unknown; operation?: unknown };
  // Function calls carry JSON arguments; shell and apply-patch calls their action or operation instead.
  const args = item.arguments !== undefined ? parseToolArguments(item.arguments) : (raw.action ?? raw.operation ?? {});
  const callId = typeof raw.callId === 'string' ? raw.callId : typeof raw.id === 'string' ? raw.id : undefined;
  return { toolName: item.name ?? item.rawItem.type, args, callId, agentName: item.agent.name };
}

/**
 * Settles every interruption of a run through the service: one action request per tool call (all at once), then
 * `state.approve(item)` for approved calls and `state.reject(item, { message })` for the others, the message
 * carrying the denial's reason to the model. Returns the state: resume with `run(agent, state)`.
 */
export async function approveInterruptions<TState extends ApprovalRunState>(
  client: AgentAuthClient,
  result: InterruptedRun<TState>,
  options: ToolApprovalOptions = {},
): Promise<TState> {
  const items = result.interruptions;
  const decisions = await approveToolCalls(client, items.map(toolCallOfInterruption), {
    ...options,
    framework: 'openai-agents',
  });
  for (const [i, item] of items.entries()) applyDecision(result.state, item, decisions[i]!);
  return result.state;
}

/** Writes one decision into the run state. */
export function applyDecision(
  state: ApprovalRunState,
  item: RunToolApprovalItem,
  decision: ToolApprovalDecision,
): void {
  if (decision.approved) state.approve(item);
  else state.reject(item, { message: rejectionMessage(decision) });
}
