import type { AuditEvent } from '@agent-auth/contracts';
import type { Sql } from '@agent-auth/db';
import { chainEach, publicEvent, type UnsealedEvent } from '../domain/audit-chain.js';

interface SealedRow extends UnsealedEvent {
  seq: string; // bigint arrives as text
  prev_hash: string;
  hash: string;
}

const toEvent = (r: SealedRow): AuditEvent =>
  publicEvent(r, { seq: Number(r.seq), prev_hash: r.prev_hash, hash: r.hash });

interface WaitingRow extends UnsealedEvent {
  account_id: string;
  tx: string; // xid8 arrives as text
}

/** What one sealing round did. */
export interface SealRound {
  /** When each sealed event was written. */
  sealedAt: Date[];
  /** True when the round took a full batch (more may be waiting). */
  full: boolean;
  /**
   * Every event written by a transaction below this id (xid8, as text) is sealed unless `full`; null when another
   * sealer held the chain and `wait` was false.
   */
  horizon: string | null;
}

/**
 * Persistence of the accounts' audit chains (DESIGN 5.2): sealing new events, and reading sealed ones. An event is
 * written once into actions.audit_events with the id of the transaction that wrote it; sealing inserts its place
 * into actions.audit_chain and moves one cursor, (tx, id), past it (migration 043 says why none is ever skipped).
 */
export function createAuditChainStore(sql: Sql) {
  return {
    /**
     * Seals up to `batch` of the events past the cursor whose transactions are older than every running one, each
     * after its account's chain head, in one transaction under one advisory lock, so replicas never seal at once.
     * `wait` false skips the round when another sealer holds the lock.
     */
    async seal(batch: number, wait: boolean): Promise<SealRound> {
      return sql.begin(async (tx) => {
        const lock = wait
          ? tx`select pg_advisory_xact_lock(hashtext('actions.audit_chain'), 0) is null as locked`
          : tx`select pg_try_advisory_xact_lock(hashtext('actions.audit_chain'), 0) as locked`;
        // Sent together (one round trip); the read starts after the lock is taken, so it sees every seal before.
        const [[{ locked } = { locked: false }], rows] = await Promise.all([
          lock,
          tx<Array<WaitingRow & { horizon: string }>>`
            with n as (select pg_snapshot_xmin(pg_current_snapshot()) as horizon)
            select n.horizon::text as horizon, e.id, e.account_id, e.request_id, e.event, e.actor, e.detail, e.at,
              e.tx::text as tx
            from n left join lateral (
              select e.* from actions.audit_events e
              where (e.tx, e.id) > ((select sealed_tx from actions.audit_horizon),
                                    (select sealed_id from actions.audit_horizon))
                and e.tx < n.horizon
              order by e.tx, e.id limit ${batch}
            ) e on true`,
        ]);
        if (!wait && !locked) return { sealedAt: [], full: false, horizon: null };
        const horizon = rows[0]!.horizon;
        const events = rows.filter((r) => r.id !== null);
        if (!events.length) return { sealedAt: [], full: false, horizon };
        const accounts = [...new Set(events.map((e) => e.account_id))];
        const heads = await tx<Array<{ account_id: string; seq: string; hash: string }>>`
          select a.account_id, h.seq, h.hash from unnest(${accounts}::text[]) as a(account_id)
          join lateral (select seq, hash from actions.audit_chain c where c.account_id = a.account_id
                        order by seq desc limit 1) h on true`;
        const chained = chainEach(events, new Map(heads.map((h) => [h.account_id, h])));
        const last = events[events.length - 1]!;
        await tx`
          with sealed as (
            insert into actions.audit_chain (account_id, seq, event_id, prev_hash, hash)
            select c.account_id, c.seq, c.event_id, c.prev_hash, c.hash
            from unnest(${chained.map((c) => c.account_id)}::text[], ${chained.map((c) => c.id)}::bigint[],
              ${chained.map((c) => String(c.seq))}::bigint[], ${chained.map((c) => c.prev_hash)}::text[],
              ${chained.map((c) => c.hash)}::text[])
              as c(account_id, event_id, seq, prev_hash, hash)
          )
          update actions.audit_horizon set sealed_tx = ${last.tx}::xid8, sealed_id = ${last.id}`;
        return { sealedAt: events.map((e) => e.at), full: events.length === batch, horizon };
      }) as Promise<SealRound>;
    },

    /** The first transaction id not yet started (xid8 as text): every event written before now is below it. */
    async nextTransaction(): Promise<string> {
      const [row] = await sql<[{ next: string }]>`select pg_snapshot_xmax(pg_current_snapshot())::text as next`;
      return row.next;
    },

    /** An account's sealed events after `after`, in seq order. */
    async page(accountId: string, after: number, limit: number): Promise<AuditEvent[]> {
      const rows = await sql<SealedRow[]>`
        select e.id, e.request_id, e.event, e.actor, e.detail, e.at, c.seq, c.prev_hash, c.hash
        from actions.audit_chain c join actions.audit_events e on e.id = c.event_id
        where c.account_id = ${accountId} and c.seq > ${after} order by c.seq limit ${limit}`;
      return rows.map(toEvent);
    },

    /** The sealed events of one request of an account, in seq order. */
    async forRequest(accountId: string, requestId: string): Promise<AuditEvent[]> {
      const rows = await sql<SealedRow[]>`
        select e.id, e.request_id, e.event, e.actor, e.detail, e.at, c.seq, c.prev_hash, c.hash
        from actions.audit_events e join actions.audit_chain c on c.event_id = e.id
        where e.request_id = ${requestId} and e.account_id = ${accountId} order by c.seq`;
      return rows.map(toEvent);
    },

    /** The last sealed event of an account's chain, or undefined while it has none. */
    async head(accountId: string): Promise<AuditEvent | undefined> {
      const [row] = await sql<SealedRow[]>`
        select e.id, e.request_id, e.event, e.actor, e.detail, e.at, c.seq, c.prev_hash, c.hash
        from actions.audit_chain c join actions.audit_events e on e.id = c.event_id
        where c.account_id = ${accountId} order by c.seq desc limit 1`;
      return row && toEvent(row);
    },
  };
}
export type AuditChainStore = ReturnType<typeof createAuditChainStore>;
