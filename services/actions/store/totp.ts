import type { Sql } from '@agent-auth/db';

export interface TotpRow {
  account_id: string;
  member_id: string;
  secret_enc: string;
  last_step: string; // bigint arrives as text
  /** The bus call that used last_step (null: one without a call id, in one process). */
  last_step_call: string | null;
  failures: number;
  failures_since: Date | null;
}

/** Persistence of each member's TOTP authenticator: the encrypted secret, replay guard and failure throttle. */
export function createTotpStore(sql: Sql) {
  return {
    /** Stores the member's TOTP secret; false when they have one configured already. */
    async enroll(who: { accountId: string; memberId: string }, secretEnc: string, actor: string): Promise<boolean> {
      const rows = await sql`
        with enrolled as (
          insert into actions.totp (account_id, member_id, secret_enc) values (${who.accountId}, ${who.memberId}, ${secretEnc})
          on conflict (member_id) do nothing returning account_id, member_id
        ), logged as (
          insert into actions.audit_events (account_id, event, actor, detail)
          select account_id, 'totp_enrolled', ${actor}, jsonb_build_object('member_id', member_id) from enrolled
        )
        select account_id from enrolled`;
      return rows.length === 1;
    },

    async find(memberId: string): Promise<TotpRow | undefined> {
      const [row] = await sql<TotpRow[]>`select * from actions.totp where member_id = ${memberId}`;
      return row;
    },

    /**
     * Accepts a verified code's time step once: raises last_step only if the step is newer. False when this step
     * (or a later one) was already used, so of two concurrent approvals with one code exactly one gets true. The
     * bus call that used it is noted with it.
     */
    async consumeStep(memberId: string, step: number, callId: string | null): Promise<boolean> {
      const rows = await sql`
        update actions.totp set last_step = ${step}, last_step_call = ${callId}, failures = greatest(failures - 1, 0)
        where member_id = ${memberId} and last_step < ${step} returning member_id`;
      return rows.length === 1;
    },

    /**
     * Whether a step is the newest one used and the call that used it is this one (a send of it again): its attempt
     * is given back as a correct code's is.
     */
    async usedByCall(memberId: string, step: number, callId: string): Promise<boolean> {
      const rows = await sql`
        update actions.totp set failures = greatest(failures - 1, 0)
        where member_id = ${memberId} and last_step = ${step} and last_step_call = ${callId} returning member_id`;
      return rows.length === 1;
    },

    /**
     * Claims one verification attempt before the code is checked: counts it in the current throttle window (a new
     * window starts when the last one is over) unless the account already has maxAttempts unsuccessful attempts in
     * the window. Claiming first means a burst of concurrent guesses cannot slip past the throttle. A correct code
     * gives its attempt back (consumeStep). Returns 0 when claimed, else the seconds until the window ends.
     */
    async claimAttempt(memberId: string, maxAttempts: number, windowSeconds: number): Promise<number> {
      const window = sql`failures_since > now() - make_interval(secs => ${windowSeconds})`;
      const claimed = await sql`
        update actions.totp set
          failures = case when ${window} then failures + 1 else 1 end,
          failures_since = case when ${window} then failures_since else now() end
        where member_id = ${memberId} and not (failures >= ${maxAttempts} and coalesce(${window}, false))
        returning member_id`;
      if (claimed.length === 1) return 0;
      const [row] = await sql<Array<{ locked_for: number }>>`
        select greatest(1, ceil(extract(epoch from failures_since + make_interval(secs => ${windowSeconds}) - now())))::int as locked_for
        from actions.totp where member_id = ${memberId}`;
      return row?.locked_for ?? 1;
    },
  };
}
export type TotpStore = ReturnType<typeof createTotpStore>;
