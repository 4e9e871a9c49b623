import type { LimitPeriod } from '@agent-auth/contracts';
import type { Sql } from '@agent-auth/db';
import type { PeriodWindows } from '../domain/period-windows.js';

/** An approved amount: by a rule at creation, or by a person on the device. */
export interface SpendEntry {
  action_id: string;
  agent_id: string;
  action_type: string;
  amount_cents: number;
  currency: string;
  approved_by: 'rule' | 'person' | 'grant';
  approved_at: Date;
}

/** A limit and the window it is measured in. */
export interface SpendScope {
  id: string;
  start: Date;
  end: Date;
  agent_id: string | null;
  action_type: string | null;
}

const windowsJson = (w: PeriodWindows) =>
  (Object.keys(w) as LimitPeriod[]).map((period) => ({
    period,
    starts: w[period].start.toISOString(),
    ends: w[period].end.toISOString(),
  }));

/**
 * Spend accounting of the policy schema. Every write runs as one plpgsql call that takes the account's advisory
 * lock (migrations/002_limit_usage.sql), so recording and checking spend happen for one request of an account at
 * a time across every replica, and the lock is held only while the database works.
 */
export function createSpendStore(sql: Sql) {
  return {
    /**
     * Records an approval's spend and adds it to the totals of the limits covering it. With `enforce`, nothing is
     * recorded when a covering limit would pass its figure. `spent` is each covering limit's spend before it.
     */
    async record(
      accountId: string,
      entry: SpendEntry,
      windows: PeriodWindows,
      enforce: boolean,
    ): Promise<{ recorded: boolean; spent: Map<string, number> }> {
      const [row] = await sql<Array<{ result: { recorded: boolean; spent: Record<string, number | string> } }>>`
        select policy.record_spend(${accountId},
          ${sql.json({ ...entry, approved_at: entry.approved_at.toISOString() } as never)}::jsonb,
          ${sql.json(windowsJson(windows) as never)}::jsonb, ${enforce}) as result`;
      return {
        recorded: row!.result.recorded,
        spent: new Map(Object.entries(row!.result.spent).map(([id, v]) => [id, Number(v)])),
      };
    },

    /** Opens a new limit's running total for its current window (from the ledger, under the account's lock). */
    async openWindow(accountId: string, limitId: string, window: { start: Date; end: Date }): Promise<void> {
      await sql`select policy.open_limit_usage(${accountId}, ${limitId}, ${window.start}, ${window.end})`;
    },

    /**
     * Approves a request by the first grant of `grantIds` (in that order) with budget and uses left, recording its
     * spend (refused when a covering limit would pass its figure) and the grant's use, under the account's lock.
     * `grant_id` is null when no grant could; `spent` is as for record().
     */
    async useGrant(
      accountId: string,
      grantIds: readonly string[],
      entry: Omit<SpendEntry, 'amount_cents'> & { amount_cents: number | null },
      windows: PeriodWindows,
    ): Promise<{ grant_id: string | null; recorded: boolean; spent: Map<string, number> }> {
      const [row] = await sql<
        Array<{ result: { grant_id: string | null; recorded: boolean; spent: Record<string, number | string> } }>
      >`
        select policy.use_grant(${accountId}, ${grantIds as string[]}::text[],
          ${sql.json({ ...entry, approved_at: entry.approved_at.toISOString() } as never)}::jsonb,
          ${sql.json(windowsJson(windows) as never)}::jsonb) as result`;
      return {
        grant_id: row!.result.grant_id,
        recorded: row!.result.recorded,
        spent: new Map(Object.entries(row!.result.spent).map(([id, v]) => [id, Number(v)])),
      };
    },

    /**
     * Takes back the spend of an action that was never stored or approved after all, and the grant use that
     * approved it if one did; false when neither was recorded.
     */
    async release(accountId: string, actionId: string): Promise<boolean> {
      const [row] = await sql<Array<{ released: boolean; use_released: boolean }>>`
        select policy.release_spend(${accountId}, ${actionId}) as released,
          policy.release_grant_use(${accountId}, ${actionId}) as use_released`;
      return row!.released || row!.use_released;
    },

    /** USD cents spent in each limit's window, by limit id: its running total, or the ledger before it has one. */
    async spentIn(accountId: string, scopes: readonly SpendScope[]): Promise<Map<string, number>> {
      if (scopes.length === 0) return new Map();
      const rows = await sql<Array<{ id: string; spent: string }>>`
        select l.id, coalesce(
          (select u.spent_cents from policy.limit_usage u where u.limit_id = l.id and u.window_start = l.starts),
          policy.spent_cents(${accountId}, l.starts, l.ends, l.agent_id, l.action_type))::text as spent
        from jsonb_to_recordset(${sql.json(scopes.map((s) => ({ id: s.id, starts: s.start.toISOString(), ends: s.end.toISOString(), agent_id: s.agent_id, action_type: s.action_type })) as never)}::jsonb)
          as l(id text, starts timestamptz, ends timestamptz, agent_id text, action_type text)`;
      return new Map(rows.map((r) => [r.id, Number(r.spent)]));
    },
  };
}
export type SpendStore = ReturnType<typeof createSpendStore>;
