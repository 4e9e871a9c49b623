import type { Sql } from '@agent-auth/db';
import type { Plan } from '@agent-auth/contracts';

/** The current calendar month (UTC), the plan quota's period. */
export const THIS_MONTH = (sql: Sql) => sql`date_trunc('month', now() at time zone 'utc')::date`;
/** Persistence of an account's plan and its monthly action count (the plan quota). */
export function createAccountStore(sql: Sql) {
  return {
    /** The account's plan and how many actions it created this calendar month (UTC): the sum of its counter rows. */
    async usage(accountId: string): Promise<{ plan: Plan; actions: number } | undefined> {
      const [row] = await sql<Array<{ plan: Plan; actions: number }>>`
        select a.plan, coalesce((select sum(u.actions) from actions.monthly_usage u
          where u.account_id = a.id and u.month = ${THIS_MONTH(sql)}), 0)::int as actions
        from actions.accounts a where a.id = ${accountId}`;
      return row;
    },

    /** Changes the account's plan; back on the free plan the month's shards are gathered into the one row it counts on. */
    async setPlan(accountId: string, plan: Plan, actor: string): Promise<void> {
      await sql`
        with changed as (update actions.accounts set plan = ${plan} where id = ${accountId} returning id),
        spread as (
          delete from actions.monthly_usage u using changed
          where ${plan} = 'free' and u.account_id = changed.id and u.month = ${THIS_MONTH(sql)} and u.shard <> 0
          returning u.actions
        ),
        gathered as (
          insert into actions.monthly_usage as u (account_id, month, shard, actions)
          select id, ${THIS_MONTH(sql)}, 0, (select coalesce(sum(actions), 0) from spread) from changed where ${plan} = 'free'
          on conflict (account_id, month, shard) do update set actions = u.actions + excluded.actions
        )
        insert into actions.audit_events (account_id, event, actor, detail)
        select id, 'plan_changed', ${actor}, ${sql.json({ plan })} from changed`;
    },
  };
}
export type AccountStore = ReturnType<typeof createAccountStore>;
