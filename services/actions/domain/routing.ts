import type { MemberRole, RequestRouting } from '@agent-auth/contracts';
import type { RequestRow } from './rows.js';

/** Who is asking: a member and their role, as the device principal carries them. */
export interface Asker {
  member_id: string;
  role: MemberRole;
}

/** What a request keeps of its routing (its columns of migration 080). */
export type RoutedRow = Pick<RequestRow, 'approvers' | 'escalate_to' | 'escalated_at'>;

/** How a member is named in a rule's `approvers` or `escalate_to`: by id, or by role. */
export function namesOf(asker: Asker): [string, string] {
  return [asker.member_id, `role:${asker.role}`];
}

const names = (list: readonly string[], asker: Asker): boolean =>
  list.includes(asker.member_id) || list.includes(`role:${asker.role}`);

/**
 * Whether a member may see and answer a pending request: every member who may approve when its rules named no
 * approvers, else its approvers, and once it escalated the people it escalated to as well. (Auditors answer
 * nothing: the gateway's roles table refuses them before this.)
 */
export function mayAnswer(row: RoutedRow, asker: Asker): boolean {
  if (!row.approvers || names(row.approvers, asker)) return true;
  return !!row.escalated_at && !!row.escalate_to && names(row.escalate_to, asker);
}

/** The routing columns of a new request, from the policy's routing and its creation time. */
export function routingColumns(
  routing: RequestRouting | undefined,
  createdAt: Date,
): Pick<RequestRow, 'approvers' | 'escalate_at' | 'escalate_to'> {
  if (!routing) return { approvers: null, escalate_at: null, escalate_to: null };
  const after = routing.escalate_after_seconds;
  return {
    approvers: routing.approvers,
    escalate_at: after === null || !routing.escalate_to ? null : new Date(createdAt.getTime() + after * 1000),
    escalate_to: after === null ? null : routing.escalate_to,
  };
}
