// Vercel AI SDK (v6): generateText / streamText end with `tool-approval-request` parts for tools with
// `needsApproval`; the answer is a tool message of `tool-approval-response` parts sent with the next call.
import type { ToolApprovalResponse, ToolModelMessage } from 'ai';
import type { AgentAuthClient } from '../client.js';
import { approveToolCalls, rejectionMessage, type ToolApprovalOptions, type ToolCall } from './tool-approval.js';

export type { ToolApprovalDecision, ToolApprovalOptions, ToolCall, ToolRequestFields } from './tool-approval.js';

/** A `tool-approval-request` part of a result's content (the fields these helpers read). */
export interface ApprovalRequestPart {
  type: 'tool-approval-request';
  approvalId: string;
  toolCall: { toolCallId: string; toolName: string; input: unknown; providerExecuted?: boolean };
}

/** Any part of `result.content`; only approval requests are read. */
export type ContentPart = { type: string } | ApprovalRequestPart;

function isApprovalRequest(part: ContentPart): part is ApprovalRequestPart {
  return part.type === 'tool-approval-request';
}

/**
 * Answers the approval requests among a result's content parts through the service (one action request per tool
 * call, all at once) and returns the tool message to append to the messages before the next generateText /
 * streamText call, or undefined when there was nothing to approve. A denial carries the holder's reason, which
 * the SDK puts in the `execution-denied` result the model sees.
 */
export async function answerToolApprovals(
  client: AgentAuthClient,
  content: Iterable<ContentPart>,
  options: ToolApprovalOptions = {},
): Promise<ToolModelMessage | undefined> {
  const requests = [...content].filter(isApprovalRequest);
  if (requests.length === 0) return undefined;
  const calls: ToolCall[] = requests.map(({ toolCall }) => ({
    toolName: toolCall.toolName,
    args: toolCall.input,
    callId: toolCall.toolCallId,
  }));
  const decisions = await approveToolCalls(client, calls, { ...options, framework: 'ai-sdk' });
  const answers = requests.map((request, i): ToolApprovalResponse => {
    const decision = decisions[i]!;
    const answer: ToolApprovalResponse = {
      type: 'tool-approval-response',
      approvalId: request.approvalId,
      approved: decision.approved,
    };
    if (!decision.approved) answer.reason = rejectionMessage(decision);
    // Only a provider-executed tool's answer is sent to the provider; the SDK needs the flag to know which.
    if (request.toolCall.providerExecuted) answer.providerExecuted = true;
    return answer;
  });
  return { role: 'tool', content: answers };
}
