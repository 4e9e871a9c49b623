import type { ActionType, Condition, LimitPeriod, RiskLevel, RuleDecision } from '@agent-auth/contracts';
import type { GrantMatch } from './grant-matching.js';

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
  /** Distinct devices a require_quorum rule needs; null for other rules. */
  quorum: number | null;
  /** All must hold for the rule to apply; null: none. */
  conditions: Condition[] | null;
  /** An ask or require_quorum rule's approvers (member ids, role:<role>); null: every approver. */
  approvers: string[] | null;
  /** Hands a request still pending this long after creation to `escalate_to` too; both null: no escalation. */
  escalate_after_seconds: number | null;
  escalate_to: string[] | null;
  created_at: Date;
}

/** A Cedar policy as the store hands it out. */
export interface CedarPolicyRow {
  id: string;
  account_id: string;
  name: string;
  cedar: string;
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

/** A standing grant as the store hands it out; amounts in cents of its currency. */
export interface GrantRow {
  id: string;
  account_id: string;
  agent_id: string;
  action_type: string;
  recipient: string | null;
  currency: string;
  expires_at: Date;
  max_amount_cents: number | null;
  spent_cents: number;
  max_uses: number | null;
  uses: number;
  /** Null for a grant that approves any request of its scope. */
  match: GrantMatch | null;
  revoked_at: Date | null;
  created_from: string;
  created_at: Date;
}
