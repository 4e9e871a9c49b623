import type { HookClient } from '../http/hooks.js';

/** What the holder (or the service) decided about a tool call, as a hook answers it. */
export type HookVerdict =
  | { decision: 'allow'; reason: string; updated_input: Record<string, unknown> | null }
  | { decision: 'deny'; message: string }
  | { decision: 'ask'; reason: string };

type HookEvent = 'PreToolUse' | 'PermissionRequest';

/**
 * Claude Code's hook output. PreToolUse: `permissionDecision` allow / deny / ask with its reason (a denial's
 * reason is what the model reads) and `updatedInput` for an edited input. PermissionRequest: `decision.behavior`
 * allow (with `updatedInput`) or deny (with `message`); no decision at all lets Claude Code ask its user.
 */
function claudeCodeAnswer(event: HookEvent, verdict: HookVerdict): Record<string, unknown> {
  if (event === 'PreToolUse') {
    const output: Record<string, unknown> = { hookEventName: 'PreToolUse', permissionDecision: verdict.decision };
    output.permissionDecisionReason = verdict.decision === 'deny' ? verdict.message : verdict.reason;
    if (verdict.decision === 'allow' && verdict.updated_input) output.updatedInput = verdict.updated_input;
    return { hookSpecificOutput: output };
  }
  if (verdict.decision === 'ask') return {};
  const decision =
    verdict.decision === 'allow'
      ? { behavior: 'allow', ...(verdict.updated_input ? { updatedInput: verdict.updated_input } : {}) }
      : { behavior: 'deny', message: verdict.message };
  return { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision } };
}

/**
 * Codex's hook output: the same `hookSpecificOutput` shapes as Claude Code's for PreToolUse and
 * PermissionRequest (Codex does not take an edited input, so none is ever sent to it).
 */
function codexAnswer(event: HookEvent, verdict: HookVerdict): Record<string, unknown> {
  const plain: HookVerdict = verdict.decision === 'allow' ? { ...verdict, updated_input: null } : verdict;
  return claudeCodeAnswer(event, plain);
}

/** The client's own hook output for a verdict. */
export function hookAnswer(client: HookClient, event: HookEvent, verdict: HookVerdict): Record<string, unknown> {
  return client === 'codex' ? codexAnswer(event, verdict) : claudeCodeAnswer(event, verdict);
}

/** Whether the client runs a tool with an input the holder edited (approve with changes). */
export function acceptsEditedInput(source: unknown): boolean {
  return source === 'claude-code';
}
