import type { ActionView, PendingList } from '@agent-auth/contracts';
import type { RequestRow } from '../store/rows.js';
import { fromCents } from './amounts.js';

type Metadata = Record<string, unknown>;

/** The public action object of a stored request, with its decrypted metadata. */
export function toActionView(row: RequestRow, metadata: Metadata): ActionView {
  const cents = row.amount_cents === null ? null : Number(row.amount_cents);
  return {
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
    ...(row.spending_limit_exceeded ? { spending_limit_exceeded: row.spending_limit_exceeded } : {}),
  };
}

/** An entry of the device's pending list. */
export function toPendingItem(row: RequestRow, metadata: Metadata): PendingList['requests'][number] {
  const view = toActionView(row, metadata);
  return {
    id: view.id,
    agent_id: view.agent_id,
    agent_name: row.agent_name ?? '',
    action_type: view.action_type,
    title: view.title,
    description: view.description,
    risk_level: view.risk_level,
    reversible: view.reversible,
    amount: view.amount,
    amount_cents: view.amount_cents,
    currency: view.currency,
    recipient: view.recipient,
    metadata: view.metadata,
    content_hash: view.content_hash,
    status: view.status,
    created_at: view.created_at,
    expires_at: view.expires_at,
  };
}
