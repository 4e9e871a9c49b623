import type { Sql } from '@agent-auth/db';
import { preparePolicies } from '@agent-auth/policy-language';
import type { AccountPolicy, DecisionCedarPolicy, DecisionRule, PolicyLimit } from '../domain/account-policy.js';
import { type GrantMatchColumns, type GrantScope, grantMatchOf } from '../domain/grant-matching.js';
import { versionOf } from '../domain/policy-version.js';

/** Reads an account's rules and limits for decisions. */
export function createAccountPolicyStore(sql: Sql) {
  return {
    /** Rules and limits in one round trip, for the replica's copy (policy-cache.ts). */
    async load(accountId: string): Promise<AccountPolicy> {
      const [row] = await sql<
        Array<{
          rules: DecisionRule[];
          limits: Array<Omit<PolicyLimit, 'amount_limit_cents'> & { amount_limit_cents: string | number }>;
          grants: Array<Omit<GrantScope, 'expires_at' | 'match'> & GrantMatchColumns & { expires_at: string }>;
          policies: Array<Omit<DecisionCedarPolicy, 'created_at'> & { created_at: string }>;
          timezone: string | null;
        }>
      >`
        select
          coalesce((
            select json_agg(json_build_object('id', id, 'name', name, 'decision', decision, 'action_type', action_type,
              'agent_id', agent_id, 'risk_level_max', risk_level_max, 'amount_max_cents', amount_max_cents,
              'quorum', quorum, 'conditions', conditions, 'approvers', approvers,
              'escalate_after_seconds', escalate_after_seconds, 'escalate_to', escalate_to,
              'created_at', created_at) order by seq)
            from policy.rules where account_id = ${accountId}
          ), '[]'::json) as rules,
          coalesce((
            select json_agg(json_build_object('id', id, 'period', period, 'amount_limit_cents', amount_limit_cents,
              'agent_id', agent_id, 'action_type', action_type, 'created_at', created_at) order by seq)
            from policy.spending_limits where account_id = ${accountId}
          ), '[]'::json) as limits,
          coalesce((
            select json_agg(json_build_object('id', id, 'agent_id', agent_id, 'action_type', action_type,
              'recipient', recipient, 'currency', currency, 'expires_at', expires_at, 'match_tool_name', match_tool_name,
              'match_session_id', match_session_id, 'match_command_prefix', match_command_prefix))
            from policy.grants where account_id = ${accountId} and revoked_at is null and expires_at > now()
              and (max_uses is null or uses < max_uses) and (max_amount_cents is null or spent_cents < max_amount_cents)
          ), '[]'::json) as grants,
          coalesce((
            select json_agg(json_build_object('id', id, 'name', name, 'cedar', cedar, 'created_at', created_at)
              order by seq)
            from policy.cedar_policies where account_id = ${accountId}
          ), '[]'::json) as policies,
          (select timezone from policy.account_settings where account_id = ${accountId}) as timezone`;
      // json_build_object writes timestamps as text; the views (and so the policy version) need them as dates.
      const rules = row!.rules.map((r) => ({ ...r, created_at: new Date(r.created_at) }));
      const limits = row!.limits.map((l) => ({
        ...l,
        amount_limit_cents: Number(l.amount_limit_cents),
        created_at: new Date(l.created_at),
      }));
      const grants = row!.grants.map(({ match_tool_name, match_session_id, match_command_prefix, ...g }) => ({
        ...g,
        expires_at: new Date(g.expires_at),
        match: grantMatchOf({ match_tool_name, match_session_id, match_command_prefix }),
      }));
      const policies = row!.policies.map((p) => ({ ...p, created_at: new Date(p.created_at) }));
      const timezone = row!.timezone ?? 'UTC';
      return {
        rules,
        routing: rules.filter((r) => r.approvers !== null || r.escalate_to !== null),
        limits,
        grants,
        policies,
        // Parsed here, once per copy: each decision then only asks Cedar.
        cedar: preparePolicies(policies),
        timezone,
        // Grants are not part of the version: it hashes what the holder set, not what they approved.
        version: versionOf(accountId, { rules, limits, policies, timezone }),
      };
    },
  };
}
export type AccountPolicyStore = ReturnType<typeof createAccountPolicyStore>;
