import type { RequestRouting } from '@agent-auth/contracts';
import { type Moment, type RequestFacts, type RuleCriteria, ruleMatches } from '@agent-auth/policy-language';

/** What a rule says of who answers a request it leaves to people. */
export interface RoutingRule extends RuleCriteria {
  approvers: string[] | null;
  escalate_after_seconds: number | null;
  escalate_to: string[] | null;
}

/**
 * Who a request left to people goes to: the approvers of the first matching rule that names them, and the
 * escalation of the first matching rule that has one (the same rule, usually). Undefined when no matching rule
 * says either: every member who may approve sees it, and nothing escalates.
 */
export function routingOf(
  rules: readonly RoutingRule[],
  facts: RequestFacts,
  moment: Moment,
): RequestRouting | undefined {
  let approvers: string[] | null = null;
  let escalation: Pick<RequestRouting, 'escalate_after_seconds' | 'escalate_to'> | null = null;
  for (const rule of rules) {
    const givesApprovers = approvers === null && rule.approvers !== null;
    const givesEscalation = escalation === null && rule.escalate_to !== null;
    if ((!givesApprovers && !givesEscalation) || !ruleMatches(rule, facts, moment)) continue;
    if (givesApprovers) approvers = rule.approvers;
    if (givesEscalation)
      escalation = { escalate_after_seconds: rule.escalate_after_seconds, escalate_to: rule.escalate_to };
    if (approvers !== null && escalation !== null) break;
  }
  if (approvers === null && escalation === null) return undefined;
  return { approvers, escalate_after_seconds: null, escalate_to: null, ...escalation };
}
