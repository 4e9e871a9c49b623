import { z } from 'zod';
import { StoredText } from '../validation.js';
import { ActionStatus, ActionType, RiskLevel } from '../enums.js';
import { ConditionView } from './conditions.js';
import { DraftRuleBody, policyLimits, RuleDecision } from './policy.js';

export const cedarLimits = {
  /** Longest policy text. */
  text: 10_000,
  policiesPerAccount: 100,
} as const;

/** Body of POST /policies: one Cedar policy (a `permit` or a `forbid`) and the name decisions cite. */
export const CreatePolicyBody = z.object({
  name: StoredText().trim().min(1, 'must not be empty').max(policyLimits.ruleName),
  cedar: StoredText().trim().min(1, 'must not be empty').max(cedarLimits.text),
});
export type CreatePolicyBody = z.infer<typeof CreatePolicyBody>;

/** A stored Cedar policy; `policy_id` as the paths name it, `id` the same value. */
export const PolicyView = z.object({
  id: z.string(),
  policy_id: z.string(),
  name: z.string(),
  cedar: z.string(),
  created_at: z.string(),
});
export type PolicyView = z.infer<typeof PolicyView>;

export const PolicyList = z.object({ policies: z.array(PolicyView) });
export type PolicyList = z.infer<typeof PolicyList>;

/** GET /policies/schema: the Cedar schema policies are validated against, as text and as JSON. */
export const PolicySchemaView = z.object({
  schema: z.string(),
  schema_json: z.record(z.string(), z.unknown()),
});
export type PolicySchemaView = z.infer<typeof PolicySchemaView>;

/** Whether the runtime knows a time zone by this name (an IANA name such as `Europe/Paris`, or `UTC`). */
function knownTimeZone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** Body of PUT /account/settings. */
export const AccountSettingsBody = z.object({
  timezone: z.string().max(64).refine(knownTimeZone, 'must be an IANA time zone name, such as Europe/Paris or UTC'),
});
export type AccountSettingsBody = z.infer<typeof AccountSettingsBody>;

/** The account's settings; `timezone` is the one `local_hour` and `weekday` conditions are read in. */
export const AccountSettingsView = z.object({ timezone: z.string() });
export type AccountSettingsView = z.infer<typeof AccountSettingsView>;

export const replayLimits = { daysMax: 90, daysDefault: 30, changedMax: 50 } as const;

/** Body of POST /rules/simulate: a draft rule or a draft Cedar policy, and how many days of requests to replay. */
export const SimulateBody = z
  .object({
    rule: DraftRuleBody.optional(),
    cedar: StoredText().trim().min(1, 'must not be empty').max(cedarLimits.text).optional(),
    days: z
      .number()
      .int('must be a whole number of days')
      .min(1, `must be 1 to ${replayLimits.daysMax}`)
      .max(replayLimits.daysMax, `must be 1 to ${replayLimits.daysMax}`)
      .default(replayLimits.daysDefault),
  })
  .superRefine((body, ctx) => {
    if ((body.rule === undefined) === (body.cedar === undefined))
      ctx.addIssue({ code: 'custom', path: ['rule'], message: 'give exactly one of rule and cedar' });
  });
export type SimulateBody = z.infer<typeof SimulateBody>;

/**
 * What the automatic decision of a request is: approved or denied at once, left to a person (`pending`: no rule
 * decided it, or a quorum rule), or left to people by an `ask` rule.
 */
export const ReplayOutcome = z.enum(['approve', 'deny', 'pending', 'ask']);
export type ReplayOutcome = z.infer<typeof ReplayOutcome>;

/** A request the draft decides otherwise than today's rules and policies do. */
export const ReplayChange = z.object({
  id: z.string(),
  title: z.string(),
  /** Today's rules and policies. */
  was: ReplayOutcome,
  /** Today's rules and policies with the draft. */
  would_be: ReplayOutcome,
  /** What became of the request. */
  status: ActionStatus,
  created_at: z.string(),
});
export type ReplayChange = z.infer<typeof ReplayChange>;

/** The answer of POST /rules/simulate: the draft's decisions over the account's requests of those days. */
export const SimulationView = z.object({
  days: z.number().int(),
  evaluated: z.number().int(),
  approve: z.number().int(),
  deny: z.number().int(),
  pending: z.number().int(),
  /** Left to people by an `ask` rule. */
  ask: z.number().int(),
  /** At most 50, newest first. */
  changed: z.array(ReplayChange),
  /** How many requests changed in all (changed lists at most 50 of them). */
  changed_total: z.number().int(),
});
export type SimulationView = z.infer<typeof SimulationView>;

/** A rule as a suggestion proposes it: POST /rules takes it as it is. */
export const SuggestedRule = z.object({
  name: z.string(),
  decision: RuleDecision,
  action_type: ActionType.nullable(),
  agent_id: z.string().nullable(),
  /** An approving draft goes no riskier, and no larger, than what the person approved. */
  risk_level_max: RiskLevel.nullable(),
  amount_max_cents: z.number().int().nullable(),
  conditions: z.array(ConditionView).nullable(),
});
export type SuggestedRule = z.infer<typeof SuggestedRule>;

/** A rule learned from the account's history: what it says, why, and what it would have decided. */
export const RuleSuggestion = z.object({
  rule: SuggestedRule,
  /** In words: "37 of 37 Read calls of Claude Code were approved by a person in 30 days". */
  summary: z.string(),
  evidence: z.object({
    agent_id: z.string(),
    agent_name: z.string().nullable(),
    action_type: ActionType,
    tool_name: z.string().nullable(),
    recipient: z.string().nullable(),
    /** Requests of this kind a person decided in the window. */
    decided: z.number().int(),
    approved: z.number().int(),
    denied: z.number().int(),
    days: z.number().int(),
    /** The newest such request. */
    last_at: z.string(),
  }),
  replay: SimulationView,
});
export type RuleSuggestion = z.infer<typeof RuleSuggestion>;

export const RuleSuggestions = z.object({ suggestions: z.array(RuleSuggestion) });
export type RuleSuggestions = z.infer<typeof RuleSuggestions>;
