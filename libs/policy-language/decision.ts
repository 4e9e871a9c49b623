import type { ReplayOutcome, RuleDecision } from '@agent-auth/contracts';
import { type CedarVerdict, cedarVerdict, type PreparedPolicies } from './cedar.js';
import type { RequestFacts } from './facts.js';
import type { Moment } from './local-time.js';
import { firstMatchingRule, type RuleCriteria } from './rules.js';

/** What decides an account's requests before any limit or grant: its rules in order, then its Cedar policies. */
export interface RulesAndPolicies<R extends RuleCriteria> {
  rules: readonly R[];
  cedar: PreparedPolicies | null;
}

/** What settles a request automatically: the first matching rule, else Cedar's verdict; null leaves it to a person. */
export type AutomaticMatch<R> = { rule: R; cedar?: undefined } | { rule?: undefined; cedar: CedarVerdict } | null;

/**
 * The rule or Cedar policy that decides a request: the ordered rules first (the first match wins); Cedar only when
 * no rule matched (a matching forbid, else a matching permit).
 */
export function automaticMatch<R extends RuleCriteria>(
  policy: RulesAndPolicies<R>,
  facts: RequestFacts,
  requestId: string,
  moment: Moment,
  askCedar: CedarAsker = cedarVerdict,
): AutomaticMatch<R> {
  const rule = firstMatchingRule(policy.rules, facts, moment);
  if (rule) return { rule };
  const verdict = policy.cedar ? askCedar(policy.cedar, facts, requestId, moment) : null;
  return verdict ? { cedar: verdict } : null;
}

/** How Cedar is asked: cedarVerdict, or with a replay's own kept answers. */
export type CedarAsker = (...args: Parameters<typeof cedarVerdict>) => ReturnType<typeof cedarVerdict>;

/** What a match decides, as a replay counts it (limits and grants aside). */
export function outcomeOf(match: AutomaticMatch<{ decision: RuleDecision }>): ReplayOutcome {
  if (!match) return 'pending';
  if (match.cedar) return match.cedar.effect === 'permit' ? 'approve' : 'deny';
  switch (match.rule.decision) {
    case 'auto_approve':
      return 'approve';
    case 'auto_deny':
      return 'deny';
    case 'ask':
      return 'ask';
    default:
      return 'pending';
  }
}
