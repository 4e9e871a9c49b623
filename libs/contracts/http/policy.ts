import { z } from 'zod';
import { StoredText } from '../validation.js';
import { toCents } from '../amounts.js';
import { ActionType, RiskLevel } from '../enums.js';
import { fieldLimits } from './actions.js';
import { ConditionsBody, ConditionView } from './conditions.js';

export const ruleDecisions = ['auto_approve', 'auto_deny', 'require_quorum', 'ask'] as const;
export const RuleDecision = z.enum(ruleDecisions);
export type RuleDecision = z.infer<typeof RuleDecision>;

export const limitPeriods = ['daily', 'weekly', 'monthly'] as const;
export const LimitPeriod = z.enum(limitPeriods);
export type LimitPeriod = z.infer<typeof LimitPeriod>;

export const policyLimits = {
  ruleName: 200,
  // How many distinct devices a quorum rule may require.
  quorumMin: 2,
  quorumMax: 10,
  rulesPerAccount: 500,
  /** Entries of a rule's `approvers` or `escalate_to`. */
  routeEntriesMax: 20,
  /** How long a request waits for its approvers before it is handed to `escalate_to` too. */
  escalateMinSeconds: 5,
  escalateMaxSeconds: 86_400,
  limitsPerAccount: 100,
  // The largest action amount (fieldLimits.maxAmount dollars) in cents: a larger cap could never matter.
  maxAmountCents: fieldLimits.maxAmount * 100,
} as const;

// Agents are named by their public id (agt_…); anything else can never match, so it is refused at once.
const AgentId = StoredText().regex(/^agt_[A-Za-z0-9]{1,96}$/, 'must be an agent id (agt_…)');

/**
 * Who a request left to people goes to: a member id (mem_…), or `role:<role>` for every member with that role at
 * the time they look (auditors answer nothing, so `role:auditor` is refused).
 */
export const RouteEntry = StoredText().regex(
  /^(mem_[A-Za-z0-9]{1,96}|role:(owner|admin|approver))$/,
  'must be a member id (mem_…) or role:owner, role:admin or role:approver',
);
const RouteList = z
  .array(RouteEntry)
  .min(1, 'must name at least one member or role')
  .max(policyLimits.routeEntriesMax, `must name at most ${policyLimits.routeEntriesMax}`)
  .transform((list) => [...new Set(list)]);

/** The routing fields of a rule: only on `ask` and `require_quorum` rules (a decided request goes to no one). */
const routingFields = {
  approvers: RouteList.nullish().transform((v) => v ?? null),
  escalate_after_seconds: z
    .number()
    .int('must be a whole number of seconds')
    .min(
      policyLimits.escalateMinSeconds,
      `must be ${policyLimits.escalateMinSeconds} to ${policyLimits.escalateMaxSeconds}`,
    )
    .max(
      policyLimits.escalateMaxSeconds,
      `must be ${policyLimits.escalateMinSeconds} to ${policyLimits.escalateMaxSeconds}`,
    )
    .nullish()
    .transform((v) => v ?? null),
  escalate_to: RouteList.nullish().transform((v) => v ?? null),
};

const ruleFields = {
  name: StoredText().trim().min(1, 'must not be empty').max(policyLimits.ruleName),
  decision: RuleDecision,
  action_type: ActionType.nullish().transform((v) => v ?? null),
  agent_id: AgentId.nullish().transform((v) => v ?? null),
  risk_level_max: RiskLevel.nullish().transform((v) => v ?? null),
  amount_max_cents: z
    .number()
    .int('must be a whole number of cents')
    .min(0)
    .max(policyLimits.maxAmountCents)
    .nullish()
    .transform((v) => v ?? null),
  /** With `require_quorum`: how many distinct devices of the account must approve, 2–10. */
  quorum: z
    .number()
    .int('must be a whole number')
    .min(policyLimits.quorumMin, `must be ${policyLimits.quorumMin} to ${policyLimits.quorumMax}`)
    .max(policyLimits.quorumMax, `must be ${policyLimits.quorumMin} to ${policyLimits.quorumMax}`)
    .nullish()
    .transform((v) => v ?? null),
  /** 1–10 conditions on the request, all of which must hold (null: none). */
  conditions: ConditionsBody.nullish().transform((v) => v ?? null),
  ...routingFields,
};

type RoutingOf = { approvers: string[] | null; escalate_after_seconds: number | null; escalate_to: string[] | null };

/** Whether a rule's decision leaves the request to people (so it may say which people). */
export const leavesToPeople = (decision: RuleDecision): boolean => decision === 'ask' || decision === 'require_quorum';

const routingGoesWithItsDecision = (rule: { decision: RuleDecision } & RoutingOf, ctx: z.core.$RefinementCtx) => {
  if (!leavesToPeople(rule.decision)) {
    for (const field of ['approvers', 'escalate_after_seconds', 'escalate_to'] as const)
      if (rule[field] !== null)
        ctx.addIssue({ code: 'custom', path: [field], message: 'is only for decision ask or require_quorum' });
  }
  if ((rule.escalate_after_seconds === null) !== (rule.escalate_to === null)) {
    const missing = rule.escalate_to === null ? 'escalate_to' : 'escalate_after_seconds';
    ctx.addIssue({ code: 'custom', path: [missing], message: 'escalate_after_seconds and escalate_to go together' });
  }
};

const quorumGoesWithItsDecision = (
  rule: { decision: RuleDecision; quorum: number | null } & RoutingOf,
  ctx: z.core.$RefinementCtx,
) => {
  routingGoesWithItsDecision(rule, ctx);
  if (rule.decision === 'require_quorum' && rule.quorum === null)
    ctx.addIssue({ code: 'custom', path: ['quorum'], message: 'is required with decision require_quorum' });
  if (rule.decision !== 'require_quorum' && rule.quorum !== null)
    ctx.addIssue({ code: 'custom', path: ['quorum'], message: 'is only for decision require_quorum' });
};

/** Body of POST /rules. Unset or null filters match everything. */
export const CreateRuleBody = z.object(ruleFields).superRefine(quorumGoesWithItsDecision);
export type CreateRuleBody = z.infer<typeof CreateRuleBody>;

/** A rule not saved yet (a replay's draft, a suggestion): as POST /rules takes it, its name optional. */
export const DraftRuleBody = z
  .object({ ...ruleFields, name: ruleFields.name.optional().transform((v) => v ?? 'draft') })
  .superRefine(quorumGoesWithItsDecision);
export type DraftRuleBody = z.infer<typeof DraftRuleBody>;

/** A stored rule; `rule_id` is the id the paths use, `id` the same value under the name every record uses. */
export const RuleView = z.object({
  id: z.string(),
  rule_id: z.string(),
  name: z.string(),
  decision: RuleDecision,
  action_type: ActionType.nullable(),
  agent_id: z.string().nullable(),
  risk_level_max: RiskLevel.nullable(),
  amount_max_cents: z.number().int().nullable(),
  /** Only on a require_quorum rule (so the policy_version of other rules is as it was). */
  quorum: z.number().int().optional(),
  /** Only on a rule with conditions (likewise). */
  conditions: z.array(ConditionView).optional(),
  /** Only on an `ask` or `require_quorum` rule that names them (likewise). */
  approvers: z.array(z.string()).optional(),
  escalate_after_seconds: z.number().int().optional(),
  escalate_to: z.array(z.string()).optional(),
  created_at: z.string(),
});
export type RuleView = z.infer<typeof RuleView>;

export const RuleList = z.object({ rules: z.array(RuleView) });
export type RuleList = z.infer<typeof RuleList>;

/** Body of POST /spending-limits: amount_limit is in dollars (USD). */
export const CreateSpendingLimitBody = z.object({
  period: LimitPeriod,
  amount_limit: z
    .number()
    .positive('must be positive')
    .max(fieldLimits.maxAmount)
    .refine((n) => toCents(n) >= 1, 'must be at least 0.01'),
  agent_id: AgentId.nullish().transform((v) => v ?? null),
  action_type: ActionType.nullish().transform((v) => v ?? null),
});
export type CreateSpendingLimitBody = z.infer<typeof CreateSpendingLimitBody>;

/** A stored spending limit; `limit_id` as the paths name it, `id` the same value. Limits are in USD. */
export const SpendingLimitView = z.object({
  id: z.string(),
  limit_id: z.string(),
  period: LimitPeriod,
  amount_limit: z.number(),
  currency: z.literal('USD'),
  agent_id: z.string().nullable(),
  action_type: ActionType.nullable(),
  created_at: z.string(),
});
export type SpendingLimitView = z.infer<typeof SpendingLimitView>;

export const SpendingLimitList = z.object({ spending_limits: z.array(SpendingLimitView) });
export type SpendingLimitList = z.infer<typeof SpendingLimitList>;

/** One entry of GET /agent/spending-summary, figures in dollars; the window bounds say when it resets. */
export const SpendingSummaryEntry = z.object({
  limit_id: z.string(),
  period: LimitPeriod,
  limit: z.number(),
  spent: z.number(),
  remaining: z.number(),
  utilization: z.number(),
  agent_id: z.string().nullable(),
  action_type: ActionType.nullable(),
  period_start: z.string(),
  period_end: z.string(),
});
export type SpendingSummaryEntry = z.infer<typeof SpendingSummaryEntry>;

export const SpendingSummary = z.object({ agent_id: z.string(), summaries: z.array(SpendingSummaryEntry) });
export type SpendingSummary = z.infer<typeof SpendingSummary>;
