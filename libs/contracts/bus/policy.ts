import { z } from 'zod';
import { ById, defineEndpoint, Empty } from './envelope.js';
import { AgentPrincipal, DevicePrincipal } from './actions.js';
import { ActionType, RiskLevel } from '../enums.js';
import { Deleted, SpendingLimitExceeded } from '../http/actions.js';
import {
  CreateRuleBody,
  CreateSpendingLimitBody,
  RuleList,
  RuleView,
  SpendingLimitList,
  SpendingLimitView,
  SpendingSummary,
} from '../http/policy.js';

const Cents = z.number().int().min(1);

/** The receipts' policy_version (DESIGN 5.2) of the rules and limits a decision was taken under. */
const PolicyVersionHash = z.string().regex(/^[0-9a-f]{64}$/);

/** What the actions service asks about a new request before storing it. */
export const DecideRequest = z.object({
  action_id: ById,
  account_id: ById,
  agent_id: ById,
  action_type: ActionType,
  risk_level: RiskLevel,
  amount_cents: Cents.nullable(),
  currency: z.string().length(3),
});
export type DecideRequest = z.infer<typeof DecideRequest>;

/**
 * The policy's answer. `spend_recorded` tells the caller that the amount now counts as spent, so that it can
 * release it if the request is never stored.
 */
export const PolicyDecision = z.discriminatedUnion('outcome', [
  z.object({ outcome: z.literal('pending'), policy_version: PolicyVersionHash }),
  z.object({
    outcome: z.enum(['approved', 'denied']),
    policy_version: PolicyVersionHash,
    resolved_by: z.string(),
    rule_applied: z.string().nullable(),
    spending_limit_exceeded: SpendingLimitExceeded.optional(),
    spend_recorded: z.boolean(),
  }),
]);
export type PolicyDecision = z.infer<typeof PolicyDecision>;

/** An approval by a person, counted as spend (idempotent per action). */
export const RecordSpendRequest = z.object({
  action_id: ById,
  account_id: ById,
  agent_id: ById,
  action_type: ActionType,
  amount_cents: Cents,
  currency: z.string().length(3),
});
export type RecordSpendRequest = z.infer<typeof RecordSpendRequest>;

export const ReleaseSpendRequest = z.object({ action_id: ById, account_id: ById });
export type ReleaseSpendRequest = z.infer<typeof ReleaseSpendRequest>;

/** The policy service's message catalog: rules, spending limits, decisions and spend accounting. */
export const policyEndpoints = {
  health: defineEndpoint('policy', 'health', Empty, z.object({ ok: z.literal(true) })),
  createRule: defineEndpoint(
    'policy',
    'create_rule',
    z.object({ device: DevicePrincipal, body: CreateRuleBody }),
    RuleView,
  ),
  listRules: defineEndpoint('policy', 'list_rules', z.object({ device: DevicePrincipal }), RuleList),
  deleteRule: defineEndpoint('policy', 'delete_rule', z.object({ device: DevicePrincipal, rule_id: ById }), Deleted),
  createLimit: defineEndpoint(
    'policy',
    'create_limit',
    z.object({ device: DevicePrincipal, body: CreateSpendingLimitBody }),
    SpendingLimitView,
  ),
  listLimits: defineEndpoint('policy', 'list_limits', z.object({ device: DevicePrincipal }), SpendingLimitList),
  deleteLimit: defineEndpoint('policy', 'delete_limit', z.object({ device: DevicePrincipal, limit_id: ById }), Deleted),
  decide: defineEndpoint('policy', 'decide', DecideRequest, PolicyDecision),
  recordSpend: defineEndpoint('policy', 'record_spend', RecordSpendRequest, z.object({ recorded: z.boolean() })),
  releaseSpend: defineEndpoint('policy', 'release_spend', ReleaseSpendRequest, z.object({ released: z.boolean() })),
  spendingSummary: defineEndpoint('policy', 'spending_summary', z.object({ agent: AgentPrincipal }), SpendingSummary),
} as const;
