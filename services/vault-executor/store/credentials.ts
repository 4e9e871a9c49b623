import type { Sql } from '@agent-auth/db';
import type { CredentialRow } from '../domain/rows.js';

/** Persistence of vault credentials (schema vault, owned by the vault executor alone). */
export function createCredentialStore(sql: Sql) {
  return {
    /** Inserts a credential; undefined when the account already has one for that service name. */
    async insert(row: Omit<CredentialRow, 'created_at'>): Promise<CredentialRow | undefined> {
      const [created] = await sql<CredentialRow[]>`
        insert into vault.credentials (id, account_id, service_name, auth_type, auth_header, allowed_hosts, description, value_enc)
        values (${row.id}, ${row.account_id}, ${row.service_name}, ${row.auth_type}, ${row.auth_header},
          ${row.allowed_hosts}, ${row.description}, ${row.value_enc})
        on conflict (account_id, service_name) do nothing
        returning *`;
      return created;
    },

    /** An account's credentials, by service name. */
    async listForAccount(accountId: string): Promise<CredentialRow[]> {
      return sql<
        CredentialRow[]
      >`select * from vault.credentials where account_id = ${accountId} order by service_name`;
    },

    async countForAccount(accountId: string): Promise<number> {
      const [row] = await sql<
        { n: number }[]
      >`select count(*)::int as n from vault.credentials where account_id = ${accountId}`;
      return row!.n;
    },

    /**
     * All of an account's credentials when it has at most `most` (an execution reads them beside its claim, before it
     * knows the service name); undefined when it has more.
     */
    async allIfFew(accountId: string, most: number): Promise<CredentialRow[] | undefined> {
      const rows = await sql<CredentialRow[]>`
        select * from vault.credentials where account_id = ${accountId} order by service_name limit ${most + 1}`;
      return rows.length > most ? undefined : rows;
    },

    /** The credential an execution uses: the account's credential of that service name. */
    async findByService(accountId: string, serviceName: string): Promise<CredentialRow | undefined> {
      const [row] = await sql<CredentialRow[]>`
        select * from vault.credentials where account_id = ${accountId} and service_name = ${serviceName}`;
      return row;
    },

    /** Removes a credential for good; false when the account has none of that id. */
    async delete(id: string, accountId: string): Promise<boolean> {
      const rows = await sql`delete from vault.credentials where id = ${id} and account_id = ${accountId} returning id`;
      return rows.length > 0;
    },
  };
}
export type CredentialStore = ReturnType<typeof createCredentialStore>;
