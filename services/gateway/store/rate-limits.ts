import type { Sql } from '@agent-auth/db';

export interface RateLimitOutcome {
  allowed: boolean;
  remaining: number;
  /** Milliseconds until the next slot frees; 0 when the identity has no request in the window. */
  resetMs: number;
}

/** The shared rate-limit log in Postgres (schema gateway, migrations 001-003), the same for every gateway replica. */
export function createRateLimitStore(sql: Sql) {
  return {
    /** Counts one request of an identity against its limit if there is room; one round trip. */
    async hit(key: string, limit: number, windowMs: number): Promise<RateLimitOutcome> {
      const [row] = await sql<Array<{ allowed: boolean; remaining: number; reset_ms: string }>>`
        select allowed, remaining, reset_ms from gateway.rate_limit_hit(${key}, ${limit}, ${windowMs})`;
      return { allowed: row!.allowed, remaining: row!.remaining, resetMs: Number(row!.reset_ms) };
    },

    /** Forgets identities with no request in the last window (they would start empty anyway). */
    async forgetIdle(windowMs: number): Promise<number> {
      const rows = await sql`
        with horizon as (select (extract(epoch from clock_timestamp()) * 1000)::bigint - ${windowMs} as ms),
        logs as (delete from gateway.rate_limits where last_ms < (select ms from horizon) returning key),
        rings as (delete from gateway.rate_limit_heads where last_ms < (select ms from horizon) returning key),
        slots as (delete from gateway.rate_limit_slots s using rings where s.key = rings.key)
        select key from logs union all select key from rings`;
      return rows.length;
    },
  };
}
export type RateLimitStore = ReturnType<typeof createRateLimitStore>;
