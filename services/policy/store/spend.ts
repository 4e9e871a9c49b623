import type { Sql } from '@agent-auth/db';

/** An approved amount: by a rule at creation, or by a person on the device. */
export interface SpendEntry {
  action_id: string;
  agent_id: string;
  action_type: string;
  amount_cents: number;
  currency: string;
  approved_by: 'rule' | 'person';
  approved_at: Date;
}

/** The spend a limit covers: a time window, narrowed to one agent and/or action type when set. */
export interface SpendScope {
  id: string;
  start: Date;
  end: Date;
  agent_id: string | null;
  action_type: string | null;
}

/** Reading and writing spend; used both inside an account's locked transaction and outside it. */
export interface SpendOps {
  /** USD cents spent in each scope, by scope id. */
  spentIn(scopes: readonly SpendScope[]): Promise<Map<string, number>>;
  /** Records an approved amount; false when that action already counts. */
  record(entry: SpendEntry): Promise<boolean>;
}

function opsOn(q: Sql, accountId: string): SpendOps {
  return {
    async spentIn(scopes) {
      if (scopes.length === 0) return new Map();
      // One round trip for all scopes; limits are USD, so only USD spend counts against them.
      const rows = await q<Array<{ id: string; spent: string }>>`
        select l.id, coalesce((
          select sum(s.amount_cents) from policy.spend s
          where s.account_id = ${accountId} and s.currency = 'USD'
            and s.approved_at >= l.starts and s.approved_at < l.ends
            and (l.agent_id is null or s.agent_id = l.agent_id)
            and (l.action_type is null or s.action_type = l.action_type)
        ), 0)::bigint::text as spent
        from jsonb_to_recordset(${q.json(scopes.map((s) => ({ id: s.id, starts: s.start.toISOString(), ends: s.end.toISOString(), agent_id: s.agent_id, action_type: s.action_type })))}::jsonb)
          as l(id text, starts timestamptz, ends timestamptz, agent_id text, action_type text)`;
      return new Map(rows.map((r) => [r.id, Number(r.spent)]));
    },
    async record(e) {
      const rows = await q`
        insert into policy.spend (action_id, account_id, agent_id, action_type, amount_cents, currency, approved_by, approved_at)
        values (${e.action_id}, ${accountId}, ${e.agent_id}, ${e.action_type}, ${e.amount_cents}, ${e.currency}, ${e.approved_by}, ${e.approved_at})
        on conflict (action_id) do nothing
        returning action_id`;
      return rows.length === 1;
    },
  };
}

/** Spend accounting of the policy schema. */
export function createSpendStore(sql: Sql) {
  return {
    /**
     * Runs `work` in a transaction that holds the account's advisory lock, so that reading the spend and recording
     * new spend happen for one request of the account at a time, across every replica. The lock goes with the
     * transaction: a crashed holder releases it, and nothing is kept in process memory.
     */
    async underAccountLock<T>(accountId: string, work: (ops: SpendOps) => Promise<T>): Promise<T> {
      return sql.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(hashtext('policy.spend'), hashtext(${accountId}))`;
        return work(opsOn(tx as unknown as Sql, accountId));
      }) as Promise<T>;
    },

    /** Unlocked reads and writes, for what cannot take a limit past its figure (summaries, spend no limit covers). */
    unlocked(accountId: string): SpendOps {
      return opsOn(sql, accountId);
    },

    /** Removes the spend of an action that was never stored or approved after all; false when none was recorded. */
    async release(accountId: string, actionId: string): Promise<boolean> {
      const rows = await sql`delete from policy.spend where action_id = ${actionId} and account_id = ${accountId} returning action_id`;
      return rows.length === 1;
    },
  };
}
export type SpendStore = ReturnType<typeof createSpendStore>;
