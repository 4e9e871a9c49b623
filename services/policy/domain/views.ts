import { fromCents, type RuleView, type SpendingLimitView } from '@agent-auth/contracts';
import type { LimitRow, RuleRow } from '../store/rows.js';

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
