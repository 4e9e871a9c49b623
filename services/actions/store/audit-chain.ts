import type { AuditEvent } from '@agent-auth/contracts';
import type { Sql } from '@agent-auth/db';
import { chainAfter, EMPTY_CHAIN, publicEvent, type ChainHead, type UnsealedEvent } from '../domain/audit-chain.js';

interface SealedRow extends UnsealedEvent {
  seq: string; // bigint arrives as text
  prev_hash: string;
  hash: string;
}

const toEvent = (r: SealedRow): AuditEvent =>
  publicEvent(r, { seq: Number(r.seq), prev_hash: r.prev_hash, hash: r.hash });

/**
 * Persistence of the accounts' audit chains (DESIGN 5.2): sealing new events, and reading sealed ones. An event is
 * written once into actions.audit_events (and, by trigger, onto the work list actions.audit_unsealed); sealing
 * inserts its place into actions.audit_chain and takes it off the work list.
 */
export function createAuditChainStore(sql: Sql) {
  return {
    /** Accounts that have events waiting to be sealed (a skip scan of the work list's primary key). */
    async accountsWithUnsealed(limit: number): Promise<string[]> {
      const rows = await sql<Array<{ account_id: string }>>`
        with recursive waiting(account_id) as (
          (select account_id from actions.audit_unsealed order by account_id limit 1)
          union all
          select (select u.account_id from actions.audit_unsealed u where u.account_id > w.account_id
                  order by u.account_id limit 1)
          from waiting w where w.account_id is not null
        )
        select account_id from waiting where account_id is not null limit ${limit}`;
      return rows.map((r) => r.account_id);
    },

    /**
     * Seals up to `batch` of an account's new events after its chain's head, in one transaction under the
     * account's advisory lock, so replicas never chain the same account at once. `wait` false skips an account
     * another sealer holds (it is being sealed already); null then, else when each sealed event was written.
     */
    async seal(accountId: string, batch: number, wait: boolean): Promise<Date[] | null> {
      return sql.begin(async (tx) => {
        const lock = wait
          ? tx`select pg_advisory_xact_lock(hashtext('actions.audit_chain'), hashtext(${accountId})) is null as locked`
          : tx`select pg_try_advisory_xact_lock(hashtext('actions.audit_chain'), hashtext(${accountId})) as locked`;
        // Sent together (one round trip); the reads start after the lock is taken, so they see every seal before.
        const [[{ locked } = { locked: false }], [last], rows] = await Promise.all([
          lock,
          tx<Array<{ seq: string; hash: string }>>`
            select seq, hash from actions.audit_chain where account_id = ${accountId} order by seq desc limit 1`,
          tx<UnsealedEvent[]>`
            select e.id, e.request_id, e.event, e.actor, e.detail, e.at
            from actions.audit_unsealed u join actions.audit_events e on e.id = u.event_id
            where u.account_id = ${accountId} order by u.event_id limit ${batch}`,
        ]);
        if (!wait && !locked) return null;
        if (!rows.length) return [];
        const head: ChainHead = last ? { seq: Number(last.seq), hash: last.hash } : EMPTY_CHAIN;
        const chained = chainAfter(head, rows);
        await tx`
          with sealed as (
            insert into actions.audit_chain (account_id, seq, event_id, prev_hash, hash)
            select ${accountId}, c.seq, c.event_id, c.prev_hash, c.hash
            from unnest(${chained.map((c) => c.id)}::bigint[], ${chained.map((c) => String(c.seq))}::bigint[],
              ${chained.map((c) => c.prev_hash)}::text[], ${chained.map((c) => c.hash)}::text[])
              as c(event_id, seq, prev_hash, hash)
            returning event_id
          )
          delete from actions.audit_unsealed u using sealed s
          where u.account_id = ${accountId} and u.event_id = s.event_id`;
        return rows.map((r) => r.at);
      }) as Promise<Date[] | null>;
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
