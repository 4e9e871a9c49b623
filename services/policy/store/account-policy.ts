import type { Sql } from '@agent-auth/db';
import type { LimitRow, RuleRow } from './rows.js';
import type { PeriodWindows } from './spend.js';

export type DecisionRule = Pick<RuleRow, 'id' | 'name' | 'decision' | 'action_type' | 'agent_id' | 'risk_level_max' | 'amount_max_cents'>;
export type DecisionLimit = Pick<LimitRow, 'id' | 'period' | 'amount_limit_cents' | 'agent_id' | 'action_type'> & {
  /** USD cents already spent in the limit's current window (0 when the spend was not asked for). */
  spent_cents: number;
};

/** What a decision needs of an account: its rules and limits, each in creation order. */
export interface AccountPolicy {
  rules: DecisionRule[];
  limits: DecisionLimit[];
}


/** Reads an account's rules and limits for a decision. */
export function createAccountPolicyStore(sql: Sql) {
  return {
    /**
     * Rules, limits and (when `windows` is given) each limit's spend in its current window, in one round trip,
     * since every action creation asks for them.
     */
    async forDecision(accountId: string, windows: PeriodWindows | null): Promise<AccountPolicy> {
      const w = windows ?? { daily: NO_WINDOW, weekly: NO_WINDOW, monthly: NO_WINDOW };
      const [row] = await sql<Array<{ rules: DecisionRule[]; limits: Array<Omit<DecisionLimit, 'spent_cents'> & { spent_cents: string | number }> }>>`
        select
          coalesce((
            select json_agg(json_build_object('id', id, 'name', name, 'decision', decision, 'action_type', action_type,
              'agent_id', agent_id, 'risk_level_max', risk_level_max, 'amount_max_cents', amount_max_cents) order by seq)
            from policy.rules where account_id = ${accountId}
          ), '[]'::json) as rules,
          coalesce((
            select json_agg(json_build_object('id', l.id, 'period', l.period, 'amount_limit_cents', l.amount_limit_cents,
              'agent_id', l.agent_id, 'action_type', l.action_type,
              'spent_cents', case when ${windows !== null} then coalesce(
                (select u.spent_cents from policy.limit_usage u where u.limit_id = l.id and u.window_start = w.starts),
                policy.spent_cents(l.account_id, w.starts, w.ends, l.agent_id, l.action_type)) else 0 end
            ) order by l.seq)
            from policy.spending_limits l
            join (values ('daily', ${w.daily.start}::timestamptz, ${w.daily.end}::timestamptz),
                         ('weekly', ${w.weekly.start}::timestamptz, ${w.weekly.end}::timestamptz),
                         ('monthly', ${w.monthly.start}::timestamptz, ${w.monthly.end}::timestamptz)) as w(period, starts, ends)
              on w.period = l.period
            where l.account_id = ${accountId}
          ), '[]'::json) as limits`;
      return { rules: row!.rules, limits: row!.limits.map((l) => ({ ...l, spent_cents: Number(l.spent_cents) })) };
    },
  };
}
export type AccountPolicyStore = ReturnType<typeof createAccountPolicyStore>;

const NO_WINDOW = { start: new Date(0), end: new Date(0) };
