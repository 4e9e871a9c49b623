import { type ActionView, fromCents, type PendingItem, type QuorumApproval } from '@agent-auth/contracts';
import type { PendingRow, RequestRow } from './rows.js';

type Metadata = Record<string, unknown>;

/** The public action object of a stored request, with its decrypted metadata. */
export function toActionView(row: RequestRow, metadata: Metadata, updatedInput?: Metadata): ActionView {
  const cents = row.amount_cents === null ? null : Number(row.amount_cents);
  const view: ActionView = {
    id: row.id,
    agent_id: row.agent_id,
    status: row.status as ActionView['status'],
    action_type: row.action_type as ActionView['action_type'],
    title: row.title,
    description: row.description,
    risk_level: row.risk_level as ActionView['risk_level'],
    reversible: row.reversible,
    amount: cents === null ? null : fromCents(cents),
    amount_cents: cents,
    currency: row.currency,
    recipient: row.recipient,
    metadata,
    callback_url: row.callback_url,
    content_hash: row.content_hash,
    rule_applied: row.rule_applied,
    resolved_by: row.resolved_by,
    resolved_at: row.resolved_at?.toISOString() ?? null,
    reason: row.reason,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    user_verified: row.user_verified ?? false,
    passkey_id: row.passkey_id ?? null,
    receipt: row.receipt ?? null,
    quorum: row.quorum_required
      ? { required: row.quorum_required, approvals: withMembers(row.quorum_approvals) }
      : null,
  };
  if (row.spending_limit_exceeded) view.spending_limit_exceeded = row.spending_limit_exceeded;
  if (updatedInput) view.updated_input = updatedInput;
  return view;
}

/** A quorum's approvals as the contract has them: an approval stored before accounts had members names none. */
function withMembers(approvals: QuorumApproval[] | null | undefined): QuorumApproval[] {
  if (!approvals) return [];
  return approvals.every((a) => a.member_id !== undefined)
    ? approvals
    : approvals.map((a) => ({ ...a, member_id: a.member_id ?? null }));
}

/**
 * An entry of the device's pending list: the fields of the action view its contract names, and the agent's name.
 * Built field by field: a device reads hundreds of these at a time. `approvals` are the quorum's so far.
 */
export function toPendingItem(
  row: PendingRow,
  metadata: Metadata,
  approvals: QuorumApproval[] | null | undefined,
): PendingItem {
  const cents = row.amount_cents === null ? null : Number(row.amount_cents);
  return {
    id: row.id,
    agent_id: row.agent_id,
    action_type: row.action_type as PendingItem['action_type'],
    title: row.title,
    description: row.description,
    risk_level: row.risk_level as PendingItem['risk_level'],
    reversible: row.reversible,
    amount: cents === null ? null : fromCents(cents),
    amount_cents: cents,
    currency: row.currency,
    recipient: row.recipient,
    metadata,
    content_hash: row.content_hash,
    status: 'pending',
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    quorum: row.quorum_required ? { required: row.quorum_required, approvals: withMembers(approvals) } : null,
    agent_name: row.agent_name,
    ...(row.approvers || row.escalate_to ? { routing: routingView(row) } : {}),
  };
}

/** What a pending entry shows of a routed request's routing. */
function routingView(row: PendingRow): NonNullable<PendingItem['routing']> {
  return {
    approvers: row.approvers ?? null,
    escalate_at: row.escalate_at?.toISOString() ?? null,
    escalate_to: row.escalate_to ?? null,
    escalated_at: row.escalated_at?.toISOString() ?? null,
  };
}

/**
 * A kept pending entry as it stands now: itself, or with the quorum's current approvals (the only part of a pending
 * request that changes). The kept entry is shared, so it is never changed in place.
 */
export function currentPendingItem(kept: PendingItem, approvals: QuorumApproval[] | null | undefined): PendingItem {
  return kept.quorum
    ? { ...kept, quorum: { required: kept.quorum.required, approvals: withMembers(approvals) } }
    : kept;
}

/** A kept entry whose request escalated since it was built (null: it has not, or the entry knows already). */
export function escalatedPendingItem(kept: PendingItem, escalatedAt: Date | null | undefined): PendingItem | null {
  if (!escalatedAt || !kept.routing || kept.routing.escalated_at) return null;
  return { ...kept, routing: { ...kept.routing, escalated_at: escalatedAt.toISOString() } };
}
