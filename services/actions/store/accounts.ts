import type { Sql } from '@agent-auth/db';
import type { Plan } from '@agent-auth/contracts';

const THIS_MONTH = (sql: Sql) => sql`date_trunc('month', now() at time zone 'utc')::date`;

/** Persistence of an account's plan and its monthly action count (the plan quota). */
export function createAccountStore(sql: Sql) {
  return {
    /** The account's plan and how many actions it created this calendar month (UTC). */
    async usage(accountId: string): Promise<{ plan: Plan; actions: number } | undefined> {
      const [row] = await sql<Array<{ plan: Plan; actions: number }>>`
        select a.plan, coalesce(u.actions, 0)::int as actions
        from actions.accounts a left join actions.monthly_usage u on u.account_id = a.id and u.month = ${THIS_MONTH(sql)}
        where a.id = ${accountId}`;
      return row;
    },

    /**
     * Counts one action against the account's month, unless a free account has already reached freeQuota; returns
     * the count including this action, or undefined when refused. One conditional upsert: the row lock makes
     * concurrent creations queue, and each sees the count the one before it left.
     */
    async countAction(accountId: string, freeQuota: number): Promise<number | undefined> {
      const [row] = await sql<Array<{ actions: number }>>`
        insert into actions.monthly_usage as u (account_id, month, actions)
        select a.id, ${THIS_MONTH(sql)}, 1 from actions.accounts a
        where a.id = ${accountId} and (a.plan = 'unlimited' or ${freeQuota} >= 1)
        on conflict (account_id, month) do update set actions = u.actions + 1
        where u.actions < ${freeQuota} or (select plan from actions.accounts where id = u.account_id) = 'unlimited'
        returning u.actions`;
      return row?.actions;
    },

    /** Gives back an action counted for a request that was then never stored. */
    async uncountAction(accountId: string): Promise<void> {
      await sql`update actions.monthly_usage set actions = greatest(actions - 1, 0)
                where account_id = ${accountId} and month = ${THIS_MONTH(sql)}`;
    },

    async setPlan(accountId: string, plan: Plan, actor: string): Promise<void> {
      await sql`
        with changed as (update actions.accounts set plan = ${plan} where id = ${accountId} returning id)
        insert into actions.audit_events (account_id, event, actor, detail)
        select id, 'plan_changed', ${actor}, ${sql.json({ plan })} from changed`;
    },
  };
}
export type AccountStore = ReturnType<typeof createAccountStore>;
