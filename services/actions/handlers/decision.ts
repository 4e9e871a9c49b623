import type { RequestContext } from '@agent-auth/bus';
import type { ActionType, RiskLevel } from '@agent-auth/contracts';

/** What the policy service is asked about a new request. */
export interface DecisionInput {
  action_id: string;
  account_id: string;
  agent_id: string;
  action_type: ActionType;
  risk_level: RiskLevel;
  amount_cents: number | null;
  currency: string;
}

/**
 * The policy's answer: leave it to a person, or resolve it at creation by a rule or a spending limit.
 * `spend_recorded` says the approved amount already counts as spent (to be released if the request is never stored).
 */
export type Decision =
  | { outcome: 'pending' }
  | {
      outcome: 'approved' | 'denied';
      resolved_by: string;
      rule_applied: string | null;
      spending_limit_exceeded?: { period: string; limit: number; spent: number; requested: number };
      spend_recorded?: boolean;
    };

/** An approved amount, as counted against spending limits. */
export interface SpendInput {
  action_id: string;
  account_id: string;
  agent_id: string;
  action_type: ActionType;
  amount_cents: number;
  currency: string;
}

/** The seam where the actions service asks for automatic decisions and reports spend (the policy service plugs in here). */
export interface PolicyDecider {
  decide(input: DecisionInput, ctx: RequestContext): Promise<Decision>;
  /** Counts an approval by a person as spend; idempotent per action. */
  recordSpend(input: SpendInput, ctx: RequestContext): Promise<void>;
  /** Takes back spend recorded for an action that did not end up approved; never throws. */
  releaseSpend(input: { action_id: string; account_id: string }, ctx: RequestContext): Promise<void>;
}

/** Used while no policy service is wired in: every request waits for a person, and nothing counts spend. */
export const noAutomaticDecisions: PolicyDecider = {
  async decide() {
    return { outcome: 'pending' };
  },
  async recordSpend() {},
  async releaseSpend() {},
};
