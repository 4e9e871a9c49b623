import { fromCents, type GrantView, type RuleView, type SpendingLimitView } from '@agent-auth/contracts';
import type { PolicyView } from '@agent-auth/contracts';
import type { CedarPolicyRow, GrantRow, LimitRow, RuleRow } from './rows.js';

/** The public record of a rule. */
export function toRuleView(row: RuleRow): RuleView {
  return {
    id: row.id,
    rule_id: row.id,
    name: row.name,
    decision: row.decision,
    action_type: row.action_type,
    agent_id: row.agent_id,
    risk_level_max: row.risk_level_max,
    amount_max_cents: row.amount_max_cents,
    ...(row.quorum === null ? {} : { quorum: row.quorum }),
    ...(row.conditions === null ? {} : { conditions: row.conditions }),
    ...(row.approvers === null ? {} : { approvers: row.approvers }),
    ...(row.escalate_to === null
      ? {}
      : { escalate_after_seconds: row.escalate_after_seconds!, escalate_to: row.escalate_to }),
    created_at: row.created_at.toISOString(),
  };
}

/** The public record of a Cedar policy. */
export function toPolicyView(row: CedarPolicyRow): PolicyView {
  return {
    id: row.id,
    policy_id: row.id,
    name: row.name,
    cedar: row.cedar,
    created_at: row.created_at.toISOString(),
  };
}

/** The public record of a spending limit, its figure in dollars. */
export function toLimitView(row: LimitRow): SpendingLimitView {
  return {
    id: row.id,
    limit_id: row.id,
    period: row.period,
    amount_limit: fromCents(row.amount_limit_cents),
    currency: 'USD',
    agent_id: row.agent_id,
    action_type: row.action_type,
    created_at: row.created_at.toISOString(),
  };
}

/** The public record of a standing grant, its amounts in dollars of its currency. */
export function toGrantView(row: GrantRow): GrantView {
  return {
    grant_id: row.id,
    agent_id: row.agent_id,
    action_type: row.action_type,
    recipient: row.recipient,
    currency: row.currency,
    expires_at: row.expires_at.toISOString(),
    max_amount: row.max_amount_cents === null ? null : fromCents(row.max_amount_cents),
    spent: fromCents(row.spent_cents),
    max_uses: row.max_uses,
    uses: row.uses,
    match: row.match,
    revoked_at: row.revoked_at?.toISOString() ?? null,
    created_from: row.created_from,
    created_at: row.created_at.toISOString(),
  };
}
