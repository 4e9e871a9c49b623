import type { AuditCheckpoint, AuditEvent } from '@agent-auth/contracts';
import type { Sql } from '@agent-auth/db';
import { chainEach, publicEvent, type UnsealedEvent } from '../domain/audit-chain.js';

interface SealedRow extends UnsealedEvent {
  seq: string; // bigint arrives as text
  prev_hash: string;
  hash: string;
}

const sameCursor = (a: Cursor, b: Cursor) => a.tx === b.tx && a.id === b.id;

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
   * sealer moved the cursor first and this round wrote nothing.
   */
  horizon: string | null;
}

/** The sealing cursor, (tx, id), as the round read it: its write goes through only if the cursor is still there. */
interface Cursor {
  tx: string;
  id: string;
}

type Heads = Map<string, { seq: number; hash: string }>;

/** Accounts whose chain heads a store keeps between rounds; past it they are read again (one statement a round). */
const KEPT_HEADS = 10_000;

/**
 * Persistence of the accounts' audit chains: sealing new events, and reading sealed ones. An event is
 * written once into actions.audit_events with the id of the transaction that wrote it; sealing inserts its place
 * into actions.audit_chain and moves one cursor, (tx, id), past it (migration 043 says why none is ever skipped).
 */
export function createAuditChainStore(sql: Sql) {
  // The chain heads as this store's last round left them, valid while the cursor is where that round put it (no
  // other sealer has sealed since): a round then reads its events and writes their places, two statements. A round
  // takes them (a failed one leaves none) and gives them back with its cursor once its write went through.
  let kept: { cursor: Cursor; heads: Heads } | undefined;

  const headsOf = async (accounts: string[], given: Heads | undefined): Promise<Heads> => {
    const heads = given ?? new Map();
    const unknown = accounts.filter((a) => !heads.has(a));
    if (!unknown.length) return heads;
    // Read after the round's events: a head sealed since is past the cursor the round read, so its write fails.
    // An account whose every event retention dropped goes on from its checkpoint, not from seq 1.
    const rows = await sql<Array<{ account_id: string; seq: string; hash: string }>>`
      select a.account_id, h.seq, h.hash from unnest(${unknown}::text[]) as a(account_id)
      join lateral (
        (select seq, hash from actions.audit_chain c where c.account_id = a.account_id order by seq desc limit 1)
        union all
        (select seq, hash from actions.audit_checkpoints k where k.account_id = a.account_id)
        order by seq desc limit 1) h on true`;
    for (const h of rows) heads.set(h.account_id, { seq: Number(h.seq), hash: h.hash });
    return heads;
  };

  const sealRound = async (batch: number): Promise<SealRound> => {
    const taken = kept;
    kept = undefined;
    // The cursor as scalar subqueries: the planner then knows it is one row. Read from the table, its row count was
    // guessed (1,810 rows), the statement's cost passed jit_above_cost, and each round spent 15 ms compiling it.
    const rows = await sql<Array<WaitingRow & { horizon: string; cursor_tx: string; cursor_id: string }>>`
        with n as (select pg_snapshot_xmin(pg_current_snapshot()) as horizon),
          c as (select (select sealed_tx from actions.audit_horizon) as sealed_tx,
                       (select sealed_id from actions.audit_horizon) as sealed_id)
        select n.horizon::text as horizon, c.sealed_tx::text as cursor_tx, c.sealed_id::text as cursor_id,
          e.id, e.account_id, e.request_id, e.event, e.actor, e.detail, e.at, e.tx::text as tx
        from n cross join c left join lateral (
          select e.* from actions.audit_events e
          where (e.tx, e.id) > (c.sealed_tx, c.sealed_id) and e.tx < n.horizon
          order by e.tx, e.id limit ${batch}
        ) e on true`;
    const { horizon, cursor_tx, cursor_id } = rows[0]!;
    const cursor = { tx: cursor_tx, id: cursor_id };
    const events = rows.filter((r) => r.id !== null);
    if (!events.length) return { sealedAt: [], full: false, horizon };
    const given = taken && sameCursor(taken.cursor, cursor) ? taken.heads : undefined;
    const heads = await headsOf([...new Set(events.map((e) => e.account_id))], given);
    const chained = chainEach(events, heads);
    const last = events[events.length - 1]!;
    const written = await sql`
        with moved as (
          update actions.audit_horizon set sealed_tx = ${last.tx}::xid8, sealed_id = ${last.id}
          where sealed_tx = ${cursor.tx}::xid8 and sealed_id = ${cursor.id}::bigint
          returning true
        )
        insert into actions.audit_chain (account_id, seq, event_id, prev_hash, hash)
        select c.account_id, c.seq, c.event_id, c.prev_hash, c.hash
        from unnest(${chained.map((c) => c.account_id)}::text[], ${chained.map((c) => c.id)}::bigint[],
          ${chained.map((c) => String(c.seq))}::bigint[], ${chained.map((c) => c.prev_hash)}::text[],
          ${chained.map((c) => c.hash)}::text[])
          as c(account_id, event_id, seq, prev_hash, hash)
        where exists (select from moved)`;
    if (written.count === 0) return { sealedAt: [], full: false, horizon: null };
    for (const c of chained) heads.set(c.account_id, { seq: c.seq, hash: c.hash });
    kept = { cursor: { tx: last.tx, id: last.id }, heads: heads.size > KEPT_HEADS ? new Map() : heads };
    return { sealedAt: events.map((e) => e.at), full: events.length === batch, horizon };
  };
  // One round at a time in this process (the background sealer and readers sealing before they read): the kept
  // heads are then only ever a finished round's.
  let previous: Promise<unknown> = Promise.resolve();

  return {
    /**
     * Seals up to `batch` of the events past the cursor whose transactions are older than every running one, each
     * after its account's chain head. The places are written, and the cursor moved, in one statement that does
     * nothing if the cursor has moved since the events were read: of sealers running at once (replicas) one round
     * goes through, the others write nothing and say so (`horizon` null).
     */
    seal(batch: number): Promise<SealRound> {
      const round = previous.then(() => sealRound(batch));
      previous = round.catch(() => {});
      return round;
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

    /** Where retention cut an account's chain (its last dropped event, signed), or undefined while it was not. */
    async checkpoint(accountId: string): Promise<AuditCheckpoint | undefined> {
      const [row] = await sql<Array<{ seq: string; hash: string; at: Date; signature: string }>>`
        select seq, hash, at, signature from actions.audit_checkpoints where account_id = ${accountId}`;
      return row && { seq: Number(row.seq), hash: row.hash, at: row.at.toISOString(), signature: row.signature };
    },

    /** The last sealed event of an account's chain still stored, or undefined while it has none. */
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
