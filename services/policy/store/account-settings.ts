import type { Sql } from '@agent-auth/db';

/** Each account's settings for decisions; an account that never set any is on UTC. */
export function createAccountSettingsStore(sql: Sql) {
  return {
    async timezone(accountId: string): Promise<string> {
      const [row] = await sql<Array<{ timezone: string }>>`
        select timezone from policy.account_settings where account_id = ${accountId}`;
      return row?.timezone ?? 'UTC';
    },

    async setTimezone(accountId: string, timezone: string): Promise<void> {
      await sql`
        insert into policy.account_settings (account_id, timezone) values (${accountId}, ${timezone})
        on conflict (account_id) do update set timezone = excluded.timezone, updated_at = now()`;
    },
  };
}
export type AccountSettingsStore = ReturnType<typeof createAccountSettingsStore>;
