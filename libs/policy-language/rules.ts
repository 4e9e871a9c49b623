import { type Condition, type RiskLevel, riskRank } from '@agent-auth/contracts';
import { conditionsHold } from './conditions.js';
import type { RequestFacts } from './facts.js';
import { type Moment, momentOf } from './local-time.js';

/** The parts of a rule that decide whether it applies; null means "any". */
export interface RuleCriteria {
  action_type: string | null;
  agent_id: string | null;
  risk_level_max: RiskLevel | null;
  amount_max_cents: number | null;
  /** All must hold; null or absent: none. */
  conditions?: readonly Condition[] | null;
}

/** Rules read the clock only for `local_hour` and `weekday` conditions; UTC now when no moment is given. */
const utcNow = (): Moment => momentOf(new Date(), 'UTC');

/**
 * Whether a rule applies to a request: every field the rule sets must match, and every condition hold. A request
 * without an amount never matches a rule that caps the amount, since there is nothing to hold under the cap.
 */
export function ruleMatches(rule: RuleCriteria, facts: RequestFacts, moment: Moment = utcNow()): boolean {
  if (rule.action_type !== null && rule.action_type !== facts.action_type) return false;
  if (rule.agent_id !== null && rule.agent_id !== facts.agent_id) return false;
  if (rule.risk_level_max !== null && riskRank(facts.risk_level) > riskRank(rule.risk_level_max)) return false;
  if (rule.amount_max_cents !== null && (facts.amount_cents === null || facts.amount_cents > rule.amount_max_cents))
    return false;
  return !rule.conditions || conditionsHold(rule.conditions, facts, moment);
}

/** The first rule, in the order given (creation order), that applies to the request. */
export function firstMatchingRule<R extends RuleCriteria>(
  rules: readonly R[],
  facts: RequestFacts,
  moment: Moment = utcNow(),
): R | undefined {
  for (const rule of rules) if (ruleMatches(rule, facts, moment)) return rule;
  return undefined;
}
