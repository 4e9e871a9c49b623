import type { Sql } from '@agent-auth/db';
import type { HistoryRow } from '../domain/replay.js';

/** Where a page of an account's history ends: the last request read (newest first). */
export interface HistoryPosition {
  created_at: Date;
  id: string;
}

/** Which of an agent's requests a page reads. */
export interface HistoryQuery {
  account_id: string;
  agent_id: string;
  since: Date;
  /** Read after this request (older than it); null: from the newest. */
  after: HistoryPosition | null;
  limit: number;
  /** Read the sealed metadata too (only when a rule or policy looks at it). */
  metadata: boolean;
  /** Only requests a person approved or denied. */
  decidedByPerson?: boolean;
}

type RawRow = Omit<HistoryRow, 'amount_cents'> & { amount_cents: string | null };

/**
 * An account's stored requests, agent by agent, newest first, a page at a time: the walk `GET /actions` makes
 * (requests_agent_list_idx, keyset on created_at and id), which reads only the rows of the page at any depth. Requests
 * are not indexed by account and time: that index would be one more write on every create.
 */
export function createRequestHistoryStore(sql: Sql) {
  return {
    /** Every agent the account ever had, revoked ones included (their requests are history too). */
    async agentsOf(accountId: string): Promise<string[]> {
      const rows = await sql<Array<{ id: string }>>`
        select id from actions.agents where account_id = ${accountId} order by created_at, id`;
      return rows.map((r) => r.id);
    },

    async page(q: HistoryQuery): Promise<HistoryRow[]> {
      const rows = await sql<RawRow[]>`
        select id, agent_id, action_type, title, risk_level, reversible, amount_cents, currency, recipient,
          ${q.metadata ? sql`metadata_enc` : sql`null::text as metadata_enc`}, status, resolved_by, created_at
        from actions.requests
        where agent_id = ${q.agent_id} and account_id = ${q.account_id} and created_at >= ${q.since}
          ${q.after ? sql`and (created_at, id) < (${q.after.created_at}, ${q.after.id})` : sql``}
          ${q.decidedByPerson ? sql`and status in ('approved', 'denied') and resolved_by in ('biometric', 'totp', 'wallet_pay', 'user')` : sql``}
        order by created_at desc, id desc
        limit ${q.limit}`;
      // bigint arrives as text; amounts are at most 1e11 cents, well inside a double's exact range.
      return rows.map((r) => ({ ...r, amount_cents: r.amount_cents === null ? null : Number(r.amount_cents) }));
    },
  };
}
export type RequestHistoryStore = ReturnType<typeof createRequestHistoryStore>;
