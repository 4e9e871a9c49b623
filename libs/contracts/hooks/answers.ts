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
 * Codex's hook output (codex-rs hooks, 0.171): an allow is no output at all for PreToolUse (an explicit "allow" is
 * refused as unsupported), unless it carries the edited input; "ask" does not exist for PreToolUse, so nobody
 * deciding fails closed there; PermissionRequest takes allow or deny, never an edited input, and no output lets
 * Codex prompt its user. A deny always carries its reason (Codex refuses one without).
 */
function codexAnswer(event: HookEvent, verdict: HookVerdict): Record<string, unknown> | null {
  if (event === 'PreToolUse') {
    if (verdict.decision === 'allow') {
      if (!verdict.updated_input) return null;
      const output = { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput: verdict.updated_input };
      return { hookSpecificOutput: output };
    }
    const said = verdict.decision === 'deny' ? verdict.message : `${verdict.reason} Denied (Codex cannot ask here)`;
    // Codex adds ". Command: <command>" after the reason itself.
    const reason = said.replace(/\.+$/, '');
    return {
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason },
    };
  }
  if (verdict.decision === 'ask') return null;
  const decision =
    verdict.decision === 'allow' ? { behavior: 'allow' } : { behavior: 'deny', message: verdict.message };
  return { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision } };
}

/** The client's own hook output for a verdict; null for no output at all (an empty answer). */
export function hookAnswer(client: HookClient, event: HookEvent, verdict: HookVerdict): Record<string, unknown> | null {
  return client === 'codex' ? codexAnswer(event, verdict) : claudeCodeAnswer(event, verdict);
}

/**
 * Whether the client runs a tool with an input the holder edited (approve with changes): Claude Code for both of
 * its events, Codex only for PreToolUse.
 */
export function acceptsEditedInput(source: unknown, event: unknown): boolean {
  return source === 'claude-code' || (source === 'codex' && event === 'PreToolUse');
}
