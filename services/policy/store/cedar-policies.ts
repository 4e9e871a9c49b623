import type { Sql } from '@agent-auth/db';
import type { CedarPolicyRow } from '../domain/rows.js';

/** Persistence of an account's Cedar policies, in creation order. */
export function createCedarPolicyStore(sql: Sql) {
  return {
    /** Inserts a policy unless the account already has `cap` policies; undefined when it has. */
    async insert(
      row: Pick<CedarPolicyRow, 'id' | 'account_id' | 'name' | 'cedar'>,
      cap: number,
    ): Promise<CedarPolicyRow | undefined> {
      const [inserted] = await sql<CedarPolicyRow[]>`
        insert into policy.cedar_policies (id, account_id, name, cedar)
        select ${row.id}, ${row.account_id}, ${row.name}, ${row.cedar}
        where (select count(*) from policy.cedar_policies where account_id = ${row.account_id}) < ${cap}
        returning id, account_id, name, cedar, created_at`;
      return inserted;
    },

    /** An account's policies in creation order. */
    list(accountId: string): Promise<CedarPolicyRow[]> {
      return sql<CedarPolicyRow[]>`
        select id, account_id, name, cedar, created_at from policy.cedar_policies
        where account_id = ${accountId} order by seq`;
    },

    /** Deletes a policy of the account; false when the account has no such policy. */
    async delete(accountId: string, id: string): Promise<boolean> {
      const rows =
        await sql`delete from policy.cedar_policies where id = ${id} and account_id = ${accountId} returning id`;
      return rows.length === 1;
    },
  };
}
export type CedarPolicyStore = ReturnType<typeof createCedarPolicyStore>;
