import type { Sql } from '@agent-auth/db';
import type { Plan } from '@agent-auth/contracts';

const THIS_MONTH = (sql: Sql) => sql`date_trunc('month', now() at time zone 'utc')::date`;
const MONTH_START = (sql: Sql) => sql`(date_trunc('month', now() at time zone 'utc') at time zone 'utc')`;

/** Persistence of an account's plan and its monthly action count (the plan quota). */
export function createAccountStore(sql: Sql) {
  return {
    /**
     * The account's plan and how many actions it created this calendar month (UTC): the counter row on the free
     * plan, the month's stored requests on the unlimited plan (every counted request is stored; see countAction).
     */
    async usage(accountId: string): Promise<{ plan: Plan; actions: number } | undefined> {
      const [row] = await sql<Array<{ plan: Plan; actions: number }>>`
        select a.plan, case when a.plan = 'free'
          then coalesce((select u.actions from actions.monthly_usage u where u.account_id = a.id and u.month = ${THIS_MONTH(sql)}), 0)
          else (select count(*) from actions.requests r where r.account_id = a.id and r.created_at >= ${MONTH_START(sql)})
        end::int as actions
        from actions.accounts a where a.id = ${accountId}`;
      return row;
    },

    /**
     * Counts one action against a free account's month unless it has already reached freeQuota; returns the count
     * including this action, or undefined when refused. One conditional upsert: the row lock makes concurrent
     * creations queue, and each sees the count the one before it left. An unlimited account writes nothing here
     * (0 is returned): its count is its stored requests, so its creations never queue on one row.
     */
    async countAction(accountId: string, freeQuota: number): Promise<number | undefined> {
      const [row] = await sql<Array<{ actions: number }>>`
        with account as (select id, plan from actions.accounts where id = ${accountId}),
        counted as (
          insert into actions.monthly_usage as u (account_id, month, actions)
          select id, ${THIS_MONTH(sql)}, 1 from account where plan = 'free' and ${freeQuota} >= 1
          on conflict (account_id, month) do update set actions = u.actions + 1
          where u.actions < ${freeQuota}
          returning u.actions
        )
        select actions from counted
        union all select 0 from account where plan = 'unlimited'`;
      return row?.actions;
    },

    /** Gives back an action counted for a request that was then never stored (free plan only: see countAction). */
    async uncountAction(accountId: string): Promise<void> {
      await sql`update actions.monthly_usage u set actions = greatest(u.actions - 1, 0)
                from actions.accounts a
                where u.account_id = ${accountId} and u.month = ${THIS_MONTH(sql)} and a.id = u.account_id and a.plan = 'free'`;
    },

    async setPlan(accountId: string, plan: Plan, actor: string): Promise<void> {
      // Back on the free plan the counter takes over again from the month's stored requests (see countAction).
      await sql`
        with changed as (update actions.accounts set plan = ${plan} where id = ${accountId} returning id),
        synced as (
          insert into actions.monthly_usage as u (account_id, month, actions)
          select id, ${THIS_MONTH(sql)}, (select count(*) from actions.requests r where r.account_id = changed.id and r.created_at >= ${MONTH_START(sql)})
          from changed where ${plan} = 'free'
          on conflict (account_id, month) do update set actions = excluded.actions
        )
        insert into actions.audit_events (account_id, event, actor, detail)
        select id, 'plan_changed', ${actor}, ${sql.json({ plan })} from changed`;
    },
  };
}
export type AccountStore = ReturnType<typeof createAccountStore>;
