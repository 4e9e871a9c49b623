import {
  type ActionStatus,
  type Condition,
  type DraftRule,
  type MetadataScalars,
  type ReplayChange,
  type ReplayOutcome,
  type RiskLevel,
  replayLimits,
  type RuleView,
  type SimulationView,
} from '@agent-auth/contracts';
import {
  type CedarAsker,
  firstMatchingRule,
  type Moment,
  outcomeOf,
  type PreparedPolicies,
  type RequestFacts,
  ruleMatches,
} from '@agent-auth/policy-language';

/** A stored request as a replay reads it: the columns rules and policies look at, and what became of it. */
export interface HistoryRow {
  id: string;
  agent_id: string;
  action_type: string;
  title: string;
  risk_level: string;
  reversible: boolean;
  amount_cents: number | null;
  currency: string;
  recipient: string | null;
  metadata_enc: string | null;
  status: string;
  resolved_by: string | null;
  created_at: Date;
}

/**
 * What the policy question asked at creation carried of a stored request (create-action.ts askPolicy). Its
 * metadata is opened on first read, if a rule or policy reads it for this request at all.
 */
export function factsOfStored(row: HistoryRow, metadata: () => MetadataScalars | undefined): RequestFacts {
  return {
    action_type: row.action_type,
    agent_id: row.agent_id,
    risk_level: row.risk_level as RiskLevel,
    amount_cents: row.amount_cents,
    currency: row.currency,
    recipient: row.recipient,
    title: row.title,
    reversible: row.reversible,
    openMetadata: metadata,
  };
}

/** A rule as a replay holds it: a stored rule (GET /rules) or a draft. */
export type ReplayRule = Pick<
  RuleView,
  'name' | 'decision' | 'action_type' | 'agent_id' | 'risk_level_max' | 'amount_max_cents'
> & { conditions?: readonly Condition[] | null };

/** Today's rules in their order, and today's Cedar policies. */
export interface ReplayPolicy {
  rules: readonly ReplayRule[];
  cedar: PreparedPolicies | null;
}

/** A draft: a rule added after today's rules, or today's Cedar policies with one more. */
export type Draft = { rule: ReplayRule; cedar?: undefined } | { rule?: undefined; cedar: PreparedPolicies };

/** A draft rule as a replay holds it. */
export const replayRuleOf = (draft: DraftRule): ReplayRule => draft;

/** Whether deciding needs the requests' metadata (a condition on it or on the tool, or a policy reading either). */
export function readsMetadata(policy: ReplayPolicy, drafts: readonly Draft[]): boolean {
  const ruleReads = (r: ReplayRule) =>
    (r.conditions ?? []).some((c) => c.field === 'tool_name' || c.field.startsWith('metadata.'));
  const cedarReads = (c: PreparedPolicies | null | undefined) =>
    !!c && (c.reads.context.has('metadata') || c.reads.context.has('tool_name'));
  return (
    policy.rules.some(ruleReads) ||
    cedarReads(policy.cedar) ||
    drafts.some((d) => (d.rule ? ruleReads(d.rule) : cedarReads(d.cedar)))
  );
}

/**
 * What today's rules and policies decide for a request (`was`), and what each draft added to them would
 * (`would`): the same as automaticMatch on today's policy with the draft, worked out with one pass over today's
 * rules whatever the number of drafts (a rule that matches today decides for every draft too).
 */
export function replayed(
  policy: ReplayPolicy,
  drafts: readonly Draft[],
  input: { facts: RequestFacts; id: string; moment: Moment; askCedar: CedarAsker },
): { was: ReplayOutcome; would: ReplayOutcome[] } {
  const { facts, id, moment, askCedar } = input;
  const rule = firstMatchingRule(policy.rules, facts, moment);
  if (rule) {
    const decided = outcomeOf({ rule });
    return { was: decided, would: drafts.length === 1 ? [decided] : drafts.map(() => decided) };
  }
  const cedarOutcome = (set: PreparedPolicies | null): ReplayOutcome => {
    const verdict = set ? askCedar(set, facts, id, moment) : null;
    return outcomeOf(verdict ? { cedar: verdict } : null);
  };
  const was = cedarOutcome(policy.cedar);
  const would: ReplayOutcome[] = [];
  for (const d of drafts)
    would.push(
      d.rule ? (ruleMatches(d.rule, facts, moment) ? outcomeOf({ rule: d.rule }) : was) : cedarOutcome(d.cedar),
    );
  return { was, would };
}

/** The counts of one draft's replay, and the newest 50 requests it changes (the history comes agent by agent). */
export function createReplayTally(days: number) {
  const view: SimulationView = {
    days,
    evaluated: 0,
    approve: 0,
    deny: 0,
    pending: 0,
    ask: 0,
    changed: [],
    changed_total: 0,
  };
  // Newest first: a change older than the oldest kept, once 50 are kept, is only counted.
  const kept: Array<{ at: number; change: ReplayChange }> = [];
  return {
    add(row: HistoryRow, was: ReplayOutcome, would: ReplayOutcome): void {
      view.evaluated++;
      view[would]++;
      if (was === would) return;
      view.changed_total++;
      const at = row.created_at.getTime();
      if (kept.length === replayLimits.changedMax && at <= kept.at(-1)!.at) return;
      let i = kept.length;
      while (i > 0 && kept[i - 1]!.at < at) i--;
      kept.splice(i, 0, { at, change: changeOf(row, was, would) });
      if (kept.length > replayLimits.changedMax) kept.pop();
    },
    result: (): SimulationView => ({ ...view, changed: kept.map((k) => k.change) }),
  };
}

function changeOf(row: HistoryRow, was: ReplayOutcome, would: ReplayOutcome): ReplayChange {
  return {
    id: row.id,
    title: row.title,
    was,
    would_be: would,
    status: row.status as ActionStatus,
    created_at: row.created_at.toISOString(),
  };
}
