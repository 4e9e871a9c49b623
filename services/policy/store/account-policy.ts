import type { Sql } from '@agent-auth/db';
import type { LimitRow, RuleRow } from './rows.js';

export type DecisionRule = Pick<RuleRow, 'id' | 'name' | 'decision' | 'action_type' | 'agent_id' | 'risk_level_max' | 'amount_max_cents'>;
export type DecisionLimit = Pick<LimitRow, 'id' | 'period' | 'amount_limit_cents' | 'agent_id' | 'action_type'>;

/** What a decision needs of an account: its rules and limits, each in creation order. */
export interface AccountPolicy {
  rules: DecisionRule[];
  limits: DecisionLimit[];
}

/** Reads an account's rules and limits for a decision. */
export function createAccountPolicyStore(sql: Sql) {
  return {
    /** Both lists in one round trip, since every action creation asks for them. */
    async forAccount(accountId: string): Promise<AccountPolicy> {
      const [row] = await sql<AccountPolicy[]>`
        select
          coalesce((
            select json_agg(json_build_object('id', id, 'name', name, 'decision', decision, 'action_type', action_type,
              'agent_id', agent_id, 'risk_level_max', risk_level_max, 'amount_max_cents', amount_max_cents) order by seq)
            from policy.rules where account_id = ${accountId}
          ), '[]'::json) as rules,
          coalesce((
            select json_agg(json_build_object('id', id, 'period', period, 'amount_limit_cents', amount_limit_cents,
              'agent_id', agent_id, 'action_type', action_type) order by seq)
            from policy.spending_limits where account_id = ${accountId}
          ), '[]'::json) as limits`;
      return row!;
    },
  };
}
export type AccountPolicyStore = ReturnType<typeof createAccountPolicyStore>;
