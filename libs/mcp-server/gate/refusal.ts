// What the caller is told when a held call does not run.
import type { Action } from '@agent-auth/client';

export interface RefusalInput {
  action: Pick<Action, 'id' | 'status' | 'reason' | 'resolved_by'>;
  /** The gate withdrew the request because nobody answered in time. */
  timedOut: boolean;
  toolName: string;
  timeoutSeconds: number;
}

/** The tool error text for a call the holder did not approve; null when approved. */
export function refusalText(input: RefusalInput): string | null {
  const { action, toolName } = input;
  const ref = `(agent-auth request ${action.id})`;
  if (action.status === 'approved') return null;
  if (action.status === 'denied')
    return `The call of ${toolName} was denied${action.reason ? `: ${action.reason}` : ' (no reason given)'}. The tool was not run. ${ref}`;
  if (input.timedOut || action.status === 'expired' || action.status === 'pending')
    return `Nobody approved the call of ${toolName} within ${input.timeoutSeconds} s, so the tool was not run. ${ref}`;
  return `The approval request for ${toolName} was withdrawn (${action.status}), so the tool was not run. ${ref}`;
}
