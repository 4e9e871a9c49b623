import type { Sql } from '@agent-auth/db';
import type { LimitRow, RuleRow } from './rows.js';
import { versionOf } from '../domain/policy-version.js';

export type DecisionRule = Pick<
  RuleRow,
  'id' | 'name' | 'decision' | 'action_type' | 'agent_id' | 'risk_level_max' | 'amount_max_cents' | 'created_at'
>;
export type PolicyLimit = Pick<
  LimitRow,
  'id' | 'period' | 'amount_limit_cents' | 'agent_id' | 'action_type' | 'created_at'
>;
export type DecisionLimit = PolicyLimit & {
  /** USD cents already spent in the limit's current window. */
  spent_cents: number;
};

/** What a decision needs of an account: its rules and limits, each in creation order (without spend). */
export interface AccountPolicy {
  rules: DecisionRule[];
  limits: PolicyLimit[];
  /** The receipts' policy_version of exactly these rules and limits (DESIGN 5.2). */
  version: string;
}

/** Reads an account's rules and limits for decisions. */
export function createAccountPolicyStore(sql: Sql) {
  return {
    /** Rules and limits in one round trip, for the replica's copy (policy-cache.ts). */
    async load(accountId: string): Promise<AccountPolicy> {
      const [row] = await sql<
        Array<{
          rules: DecisionRule[];
          limits: Array<Omit<PolicyLimit, 'amount_limit_cents'> & { amount_limit_cents: string | number }>;
        }>
      >`
        select
          coalesce((
            select json_agg(json_build_object('id', id, 'name', name, 'decision', decision, 'action_type', action_type,
              'agent_id', agent_id, 'risk_level_max', risk_level_max, 'amount_max_cents', amount_max_cents,
              'created_at', created_at) order by seq)
            from policy.rules where account_id = ${accountId}
          ), '[]'::json) as rules,
          coalesce((
            select json_agg(json_build_object('id', id, 'period', period, 'amount_limit_cents', amount_limit_cents,
              'agent_id', agent_id, 'action_type', action_type, 'created_at', created_at) order by seq)
            from policy.spending_limits where account_id = ${accountId}
          ), '[]'::json) as limits`;
      // json_build_object writes timestamps as text; the views (and so the policy version) need them as dates.
      const rules = row!.rules.map((r) => ({ ...r, created_at: new Date(r.created_at) }));
      const limits = row!.limits.map((l) => ({
        ...l,
        amount_limit_cents: Number(l.amount_limit_cents),
        created_at: new Date(l.created_at),
      }));
      return { rules, limits, version: versionOf(accountId, { rules, limits }) };
    },
  };
}
export type AccountPolicyStore = ReturnType<typeof createAccountPolicyStore>;
