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

/** Persistence of the accounts' audit chains (DESIGN 5.2): sealing new events, and reading sealed ones. */
export function createAuditChainStore(sql: Sql) {
  return {
    /** Accounts that have events waiting to be sealed. */
    async accountsWithUnsealed(limit: number): Promise<string[]> {
      const rows = await sql<Array<{ account_id: string }>>`
        select distinct account_id from actions.audit_events where hash is null limit ${limit}`;
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
        const [{ locked } = { locked: false }] = await lock;
        if (!wait && !locked) return null;
        const [last] = await tx<Array<{ seq: string; hash: string }>>`
          select seq, hash from actions.audit_events where account_id = ${accountId} and seq is not null
          order by seq desc limit 1`;
        const head: ChainHead = last ? { seq: Number(last.seq), hash: last.hash } : EMPTY_CHAIN;
        const rows = await tx<UnsealedEvent[]>`
          select id, request_id, event, actor, detail, at from actions.audit_events
          where account_id = ${accountId} and hash is null order by id limit ${batch}`;
        if (!rows.length) return [];
        const chained = chainAfter(head, rows);
        await tx`
          update actions.audit_events e set seq = c.seq, prev_hash = c.prev_hash, hash = c.hash, sealed_at = clock_timestamp()
          from unnest(${chained.map((c) => c.id)}::bigint[], ${chained.map((c) => String(c.seq))}::bigint[],
            ${chained.map((c) => c.prev_hash)}::text[], ${chained.map((c) => c.hash)}::text[]) as c(id, seq, prev_hash, hash)
          where e.id = c.id`;
        return rows.map((r) => r.at);
      }) as Promise<Date[] | null>;
    },

    /** An account's sealed events after `after`, in seq order. */
    async page(accountId: string, after: number, limit: number): Promise<AuditEvent[]> {
      const rows = await sql<SealedRow[]>`
        select id, request_id, event, actor, detail, at, seq, prev_hash, hash from actions.audit_events
        where account_id = ${accountId} and seq > ${after} order by seq limit ${limit}`;
      return rows.map(toEvent);
    },

    /** The sealed events of one request of an account, in seq order. */
    async forRequest(accountId: string, requestId: string): Promise<AuditEvent[]> {
      const rows = await sql<SealedRow[]>`
        select id, request_id, event, actor, detail, at, seq, prev_hash, hash from actions.audit_events
        where request_id = ${requestId} and account_id = ${accountId} and seq is not null order by seq`;
      return rows.map(toEvent);
    },

    /** The last sealed event of an account's chain, or undefined while it has none. */
    async head(accountId: string): Promise<AuditEvent | undefined> {
      const [row] = await sql<SealedRow[]>`
        select id, request_id, event, actor, detail, at, seq, prev_hash, hash from actions.audit_events
        where account_id = ${accountId} and seq is not null order by seq desc limit 1`;
      return row && toEvent(row);
    },
  };
}
export type AuditChainStore = ReturnType<typeof createAuditChainStore>;
