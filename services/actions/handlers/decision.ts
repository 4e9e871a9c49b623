import type { RequestContext } from '@agent-auth/bus';

/** What the policy service is asked about a new request. */
export interface DecisionInput {
  action_id: string;
  account_id: string;
  agent_id: string;
  action_type: string;
  risk_level: string;
  amount_cents: number | null;
  currency: string;
}

/** The policy's answer: leave it to a person, or resolve it at creation by a rule or a spending limit. */
export type Decision =
  | { outcome: 'pending' }
  | {
      outcome: 'approved' | 'denied';
      resolved_by: string;
      rule_applied: string | null;
      spending_limit_exceeded?: { period: string; limit: number; spent: number; requested: number };
    };

/** The seam where creation asks for an automatic decision (the policy service plugs in here). */
export interface PolicyDecider {
  decide(input: DecisionInput, ctx: RequestContext): Promise<Decision>;
}

/** Used while no policy service is wired in: every request waits for a person. */
export const noAutomaticDecisions: PolicyDecider = {
  async decide() {
    return { outcome: 'pending' };
  },
};
