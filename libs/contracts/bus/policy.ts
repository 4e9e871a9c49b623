import { z } from 'zod';
import { ById, defineEndpoint, Empty } from './envelope.js';
import { AgentPrincipal, DevicePrincipal } from './actions.js';
import { ActionType, RiskLevel } from '../enums.js';
import { Deleted, SpendingLimitExceeded } from '../http/actions.js';
import { toCents } from '../amounts.js';
import {
  type CreateRuleBody,
  type CreateSpendingLimitBody,
  LimitPeriod,
  RuleDecision,
  RuleList,
  RuleView,
  SpendingLimitList,
  SpendingLimitView,
  SpendingSummary,
} from '../http/policy.js';
import { GrantList, GrantMatchView, GrantView } from '../http/grants.js';
import { shellCommandOf } from '../hooks/tool-calls.js';
import { ConditionView } from '../http/conditions.js';

const Cents = z.number().int().min(1);

/** The receipts' policy_version of the rules and limits a decision was taken under. */
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
  /** Standing grants are scoped to the recipient; absent is the same as null. */
  recipient: z.string().nullish(),
  /** The tool call the request is (toolCallFactsOf), for grants with a match; absent for any other request. */
  tool_name: z.string().nullish(),
  session_id: z.string().nullish(),
  /** The tool call's shell command, when it runs one. */
  command: z.string().nullish(),
  /** What rules' conditions and Cedar policies read besides the fields above (absent: not known). */
  title: z.string().optional(),
  reversible: z.boolean().optional(),
  /** The scalar values of the request's top-level metadata keys (metadataScalarsOf); absent when it has none. */
  metadata: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});
export type DecideRequest = z.infer<typeof DecideRequest>;

/** A request's top-level metadata values that are strings, numbers or booleans: what conditions compare. */
export type MetadataScalars = Record<string, string | number | boolean>;

/**
 * The top-level scalar values of a request's metadata, for the policy question (metadata is at most 20 keys and
 * 8 KiB, so this is bounded); objects, arrays and nulls are left out. Undefined when there are none.
 */
export function metadataScalarsOf(metadata: Record<string, unknown> | null | undefined): MetadataScalars | undefined {
  if (!metadata) return undefined;
  let scalars: MetadataScalars | undefined;
  for (const key in metadata) {
    const value = metadata[key];
    if (
      typeof value === 'string' ||
      typeof value === 'boolean' ||
      (typeof value === 'number' && Number.isFinite(value))
    ) {
      scalars ??= {};
      scalars[key] = value;
    }
  }
  return scalars;
}

/** What a grant's match reads of a tool call request. */
export interface ToolCallFacts {
  tool_name: string;
  session_id: string | null;
  command: string | null;
}

/**
 * The tool call facts of a request's metadata (a hook's or the MCP gate's request: `tool_name`, `session_id`, and
 * the shell command of `tool_input`); null for a request that is no tool call, read no further than `tool_name`.
 */
export function toolCallFactsOf(metadata: Record<string, unknown> | null | undefined): ToolCallFacts | null {
  const toolName = metadata?.tool_name;
  if (typeof toolName !== 'string' || toolName.length === 0) return null;
  const { session_id: session, tool_input: input } = metadata!;
  return {
    tool_name: toolName,
    session_id: typeof session === 'string' && session.length > 0 ? session : null,
    command: input !== null && typeof input === 'object' ? shellCommandOf(input as Record<string, unknown>) : null,
  };
}

/**
 * Who a request left to people goes to, from the rules that matched it: `approvers` of the first matching rule that
 * names them (null: every member who may approve), and the escalation of the first matching rule that has one.
 */
export const RequestRouting = z.object({
  approvers: z.array(z.string()).nullable(),
  escalate_after_seconds: z.number().int().nullable(),
  escalate_to: z.array(z.string()).nullable(),
});
export type RequestRouting = z.infer<typeof RequestRouting>;

/**
 * The policy's answer. `spend_recorded` tells the caller that the amount now counts as spent, so that it can
 * release it if the request is never stored.
 */
export const PolicyDecision = z.discriminatedUnion('outcome', [
  z.object({
    outcome: z.literal('pending'),
    policy_version: PolicyVersionHash,
    /** Set when a quorum rule matched: the rule's name and how many devices must approve. */
    rule_applied: z.string().optional(),
    quorum: z.number().int().optional(),
    /** Set when a matching rule names approvers or an escalation; absent: every approver, no escalation. */
    routing: RequestRouting.optional(),
    /**
     * Set when the account has no rule, limit or live grant at all: every request of it is pending, as this one,
     * until its policy changes (the `policy_changed` event), so a caller may answer that itself until then.
     */
    no_policy: z.literal(true).optional(),
  }),
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

/**
 * A standing grant to create once a person approved the request it comes from; `grant_id` is chosen
 * by the caller, so that a retried creation finds the grant already there.
 */
export const CreateGrantRequest = z.object({
  grant_id: ById,
  account_id: ById,
  created_from: ById,
  agent_id: ById,
  action_type: ActionType,
  recipient: z.string().nullable(),
  currency: z.string().length(3),
  duration_seconds: z.number().int(),
  max_amount_cents: z.number().int().nullable(),
  max_uses: z.number().int().nullable(),
  /** Only tool calls of this tool, session and command prefix (each when set); absent is the same as null. */
  match: GrantMatchView.nullish(),
});
export type CreateGrantRequest = z.infer<typeof CreateGrantRequest>;

/** policy.v2.create_rule: a new rule of the device's account; null filters match everything. */
export const NewRule = z.object({
  device: DevicePrincipal,
  name: z.string(),
  decision: RuleDecision,
  action_type: ActionType.nullable(),
  agent_id: z.string().nullable(),
  risk_level_max: RiskLevel.nullable(),
  amount_max_cents: z.number().int().nullable(),
  quorum: z.number().int().nullable(),
  /** All must hold for the rule to apply; null: none. */
  conditions: z.array(ConditionView).nullable(),
  /** Routing of an `ask` or `require_quorum` rule (absent on messages of older gateways: none). */
  approvers: z
    .array(z.string())
    .nullish()
    .transform((v) => v ?? null),
  escalate_after_seconds: z
    .number()
    .int()
    .nullish()
    .transform((v) => v ?? null),
  escalate_to: z
    .array(z.string())
    .nullish()
    .transform((v) => v ?? null),
});
export type NewRule = z.infer<typeof NewRule>;

/** policy.v2.create_limit: a new spending limit of the device's account, in cents of USD. */
export const NewSpendingLimit = z.object({
  device: DevicePrincipal,
  period: LimitPeriod,
  amount_limit_cents: Cents,
  agent_id: z.string().nullable(),
  action_type: ActionType.nullable(),
});
export type NewSpendingLimit = z.infer<typeof NewSpendingLimit>;

/** The bus message of a validated POST /rules body. */
export function newRuleOf(device: DevicePrincipal, body: CreateRuleBody): NewRule {
  const { name, decision, action_type, agent_id, risk_level_max, amount_max_cents, quorum, conditions } = body;
  const { approvers, escalate_after_seconds, escalate_to } = body;
  return {
    device,
    name,
    decision,
    action_type,
    agent_id,
    risk_level_max,
    amount_max_cents,
    quorum,
    conditions,
    approvers,
    escalate_after_seconds,
    escalate_to,
  };
}

/** The bus message of a validated POST /spending-limits body (the amount, in dollars there, in cents here). */
export function newSpendingLimitOf(device: DevicePrincipal, body: CreateSpendingLimitBody): NewSpendingLimit {
  const { period, amount_limit, agent_id, action_type } = body;
  return { device, period, amount_limit_cents: toCents(amount_limit), agent_id, action_type };
}

/** The policy service's message catalog: rules, spending limits, decisions and spend accounting. */
export const policyEndpoints = {
  health: defineEndpoint('policy', 'health', Empty, z.object({ ok: z.literal(true) })),
  // v2 (rules, limits): messages of their own; v1 carried the HTTP bodies.
  createRule: defineEndpoint('policy', 'create_rule', NewRule, RuleView, 2),
  listRules: defineEndpoint('policy', 'list_rules', z.object({ device: DevicePrincipal }), RuleList),
  deleteRule: defineEndpoint('policy', 'delete_rule', z.object({ device: DevicePrincipal, rule_id: ById }), Deleted),
  createLimit: defineEndpoint('policy', 'create_limit', NewSpendingLimit, SpendingLimitView, 2),
  listLimits: defineEndpoint('policy', 'list_limits', z.object({ device: DevicePrincipal }), SpendingLimitList),
  deleteLimit: defineEndpoint('policy', 'delete_limit', z.object({ device: DevicePrincipal, limit_id: ById }), Deleted),
  decide: defineEndpoint('policy', 'decide', DecideRequest, PolicyDecision),
  recordSpend: defineEndpoint('policy', 'record_spend', RecordSpendRequest, z.object({ recorded: z.boolean() })),
  releaseSpend: defineEndpoint('policy', 'release_spend', ReleaseSpendRequest, z.object({ released: z.boolean() })),
  createGrant: defineEndpoint('policy', 'create_grant', CreateGrantRequest, GrantView),
  listGrants: defineEndpoint('policy', 'list_grants', z.object({ device: DevicePrincipal }), GrantList),
  revokeGrant: defineEndpoint(
    'policy',
    'revoke_grant',
    z.object({ device: DevicePrincipal, grant_id: ById }),
    GrantView,
  ),
  spendingSummary: defineEndpoint('policy', 'spending_summary', z.object({ agent: AgentPrincipal }), SpendingSummary),
} as const;
