import type { Sql } from '@agent-auth/db';

export interface PushSubscriptionRow {
  endpoint: string;
  account_id: string;
  device_ref: string;
  /** The member the device belongs to (null on subscriptions made before members were recorded). */
  member_id?: string | null;
  keys: { p256dh: string; auth: string };
}

/** Devices' Web Push subscriptions, per account. */
export function createPushStore(sql: Sql) {
  return {
    /** Adds or moves a subscription to this device (a browser reuses its endpoint). */
    async upsert(row: PushSubscriptionRow): Promise<void> {
      await sql`
        insert into notifier.push_subscriptions (endpoint, account_id, device_ref, member_id, keys)
        values (${row.endpoint}, ${row.account_id}, ${row.device_ref}, ${row.member_id ?? null}, ${sql.json(row.keys)})
        on conflict (endpoint) do update set account_id = excluded.account_id, device_ref = excluded.device_ref,
          member_id = excluded.member_id, keys = excluded.keys`;
    },
    async remove(endpoint: string, accountId: string): Promise<boolean> {
      const rows =
        await sql`delete from notifier.push_subscriptions where endpoint = ${endpoint} and account_id = ${accountId} returning endpoint`;
      return rows.length === 1;
    },
    async forAccount(accountId: string): Promise<PushSubscriptionRow[]> {
      return sql<
        PushSubscriptionRow[]
      >`select endpoint, account_id, device_ref, keys from notifier.push_subscriptions where account_id = ${accountId} limit 50`;
    },
    /** The subscriptions of these members' devices (an escalation's people). */
    async forMembers(accountId: string, memberIds: string[]): Promise<PushSubscriptionRow[]> {
      return sql<PushSubscriptionRow[]>`
        select endpoint, account_id, device_ref, member_id, keys from notifier.push_subscriptions
        where account_id = ${accountId} and member_id = any(${memberIds}) limit 50`;
    },
  };
}
export type PushStore = ReturnType<typeof createPushStore>;
