import type { Sql } from '@agent-auth/db';
import type { NewSpendingLimit } from '@agent-auth/contracts';
import type { LimitRow } from '../domain/rows.js';

type RawLimit = Omit<LimitRow, 'amount_limit_cents'> & { amount_limit_cents: string };

const toRow = (r: RawLimit): LimitRow => ({ ...r, amount_limit_cents: Number(r.amount_limit_cents) });

/** Persistence of an account's spending limits, in creation order. */
export function createLimitStore(sql: Sql) {
  return {
    /** Inserts a limit unless the account already has `cap` limits; undefined when it has. */
    async insert(
      id: string,
      accountId: string,
      limit: Omit<NewSpendingLimit, 'device'>,
      cap: number,
    ): Promise<LimitRow | undefined> {
      const [row] = await sql<RawLimit[]>`
        insert into policy.spending_limits (id, account_id, period, amount_limit_cents, agent_id, action_type)
        select ${id}, ${accountId}, ${limit.period}, ${limit.amount_limit_cents}, ${limit.agent_id}, ${limit.action_type}
        where (select count(*) from policy.spending_limits where account_id = ${accountId}) < ${cap}
        returning id, account_id, period, amount_limit_cents, agent_id, action_type, created_at`;
      return row && toRow(row);
    },

    /** An account's limits in creation order. */
    async list(accountId: string): Promise<LimitRow[]> {
      const rows = await sql<RawLimit[]>`
        select id, account_id, period, amount_limit_cents, agent_id, action_type, created_at
        from policy.spending_limits where account_id = ${accountId} order by seq`;
      return rows.map(toRow);
    },

    /** Deletes a limit of the account; false when the account has no such limit. */
    async delete(accountId: string, id: string): Promise<boolean> {
      const rows =
        await sql`delete from policy.spending_limits where id = ${id} and account_id = ${accountId} returning id`;
      return rows.length === 1;
    },
  };
}
export type LimitStore = ReturnType<typeof createLimitStore>;
