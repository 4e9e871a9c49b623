import type { ActionType, LimitPeriod, RiskLevel, RuleDecision } from '@agent-auth/contracts';

/** A rule as the store hands it out (bigints already numbers). */
export interface RuleRow {
  id: string;
  account_id: string;
  name: string;
  decision: RuleDecision;
  action_type: ActionType | null;
  agent_id: string | null;
  risk_level_max: RiskLevel | null;
  amount_max_cents: number | null;
  created_at: Date;
}

/** A spending limit as the store hands it out; the figure is in USD cents. */
export interface LimitRow {
  id: string;
  account_id: string;
  period: LimitPeriod;
  amount_limit_cents: number;
  agent_id: string | null;
  action_type: ActionType | null;
  created_at: Date;
}
