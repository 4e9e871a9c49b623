import { riskRank, type RiskLevel } from '@agent-auth/contracts';

/** The parts of a rule that decide whether it applies; null means "any". */
export interface RuleCriteria {
  action_type: string | null;
  agent_id: string | null;
  risk_level_max: RiskLevel | null;
  amount_max_cents: number | null;
}

/** The parts of an action request that rules look at. */
export interface ActionFacts {
  action_type: string;
  agent_id: string;
  risk_level: RiskLevel;
  amount_cents: number | null;
}

/**
 * Whether a rule applies to an action: every field the rule sets must match. An action without an
 * amount never matches a rule that caps the amount, since there is nothing to hold under the cap.
 */
export function ruleMatches(rule: RuleCriteria, action: ActionFacts): boolean {
  if (rule.action_type !== null && rule.action_type !== action.action_type) return false;
  if (rule.agent_id !== null && rule.agent_id !== action.agent_id) return false;
  if (rule.risk_level_max !== null && riskRank(action.risk_level) > riskRank(rule.risk_level_max)) return false;
  if (rule.amount_max_cents !== null && (action.amount_cents === null || action.amount_cents > rule.amount_max_cents))
    return false;
  return true;
}

/** The first rule, in the order given (creation order), that applies to the action. */
export function firstMatchingRule<R extends RuleCriteria>(rules: readonly R[], action: ActionFacts): R | undefined {
  return rules.find((rule) => ruleMatches(rule, action));
}
