import { z } from 'zod';
import { ById, defineEndpoint, Empty } from './envelope.js';
import { DevicePrincipal } from './actions.js';
import { NewRule } from './policy.js';
import { Deleted } from '../http/actions.js';
import { RuleView } from '../http/policy.js';
import {
  AccountSettingsView,
  type AccountSettingsBody,
  type CreatePolicyBody,
  PolicyList,
  PolicySchemaView,
  PolicyView,
  RuleSuggestions,
  type SimulateBody,
  SimulationView,
} from '../http/policy-language.js';

/** policy.v1.create_policy: a Cedar policy of the device's account. */
export const NewPolicy = z.object({ device: DevicePrincipal, name: z.string(), cedar: z.string() });
export type NewPolicy = z.infer<typeof NewPolicy>;

/** policy.v1.set_settings: the account's time zone. */
export const SetSettingsRequest = z.object({ device: DevicePrincipal, timezone: z.string() });
export type SetSettingsRequest = z.infer<typeof SetSettingsRequest>;

/**
 * What decides an account's requests, as a replay reads it (policy.v1.decision_policy): the rules in their order,
 * the Cedar policies, and the time zone of `local_hour` and `weekday`.
 */
export const DecisionPolicy = z.object({
  rules: z.array(RuleView),
  policies: z.array(PolicyView),
  timezone: z.string(),
});
export type DecisionPolicy = z.infer<typeof DecisionPolicy>;

/** A rule not saved: a replay's draft. */
export const DraftRule = NewRule.omit({ device: true });
export type DraftRule = z.infer<typeof DraftRule>;

/** actions.v1.simulate_rule: replay a draft rule or Cedar policy over the account's requests of `days` days. */
export const SimulateRequest = z.object({
  device: DevicePrincipal,
  rule: DraftRule.nullable(),
  cedar: z.string().nullable(),
  days: z.number().int(),
});
export type SimulateRequest = z.infer<typeof SimulateRequest>;

export function newPolicyOf(device: DevicePrincipal, body: CreatePolicyBody): NewPolicy {
  return { device, name: body.name, cedar: body.cedar };
}

export function setSettingsRequestOf(device: DevicePrincipal, body: AccountSettingsBody): SetSettingsRequest {
  return { device, timezone: body.timezone };
}

/** The bus message of a validated POST /rules/simulate body. */
export function simulateRequestOf(device: DevicePrincipal, body: SimulateBody): SimulateRequest {
  const rule = body.rule
    ? {
        name: body.rule.name,
        decision: body.rule.decision,
        action_type: body.rule.action_type,
        agent_id: body.rule.agent_id,
        risk_level_max: body.rule.risk_level_max,
        amount_max_cents: body.rule.amount_max_cents,
        quorum: body.rule.quorum,
        conditions: body.rule.conditions,
        // Who would answer does not change what a replay counts; kept so the draft is the rule as posted.
        approvers: body.rule.approvers,
        escalate_after_seconds: body.rule.escalate_after_seconds,
        escalate_to: body.rule.escalate_to,
      }
    : null;
  return { device, rule, cedar: body.cedar ?? null, days: body.days };
}

/** The policy service's Cedar policies, account settings, and what a replay reads. */
export const policyLanguageEndpoints = {
  createPolicy: defineEndpoint('policy', 'create_policy', NewPolicy, PolicyView),
  listPolicies: defineEndpoint('policy', 'list_policies', z.object({ device: DevicePrincipal }), PolicyList),
  deletePolicy: defineEndpoint(
    'policy',
    'delete_policy',
    z.object({ device: DevicePrincipal, policy_id: ById }),
    Deleted,
  ),
  policySchema: defineEndpoint('policy', 'policy_schema', Empty, PolicySchemaView),
  getSettings: defineEndpoint('policy', 'get_settings', z.object({ device: DevicePrincipal }), AccountSettingsView),
  setSettings: defineEndpoint('policy', 'set_settings', SetSettingsRequest, AccountSettingsView),
  decisionPolicy: defineEndpoint('policy', 'decision_policy', z.object({ account_id: ById }), DecisionPolicy),
} as const;

/** The actions service's replays over an account's history (its metadata is decrypted there only). */
export const ruleReplayEndpoints = {
  simulate: defineEndpoint('actions', 'simulate_rule', SimulateRequest, SimulationView),
  suggestions: defineEndpoint('actions', 'rule_suggestions', z.object({ device: DevicePrincipal }), RuleSuggestions),
} as const;
