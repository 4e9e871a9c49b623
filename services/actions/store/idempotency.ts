import type { Sql } from '@agent-auth/db';

const LIVE = (sql: Sql) => sql`created_at >= now() - interval '24 hours'`;

/** What claiming a key found: ours to process (a fresh key, or one whose holder stopped), or an earlier outcome. */
export type KeyClaim =
  | { kind: 'owner'; actionId: string }
  | { kind: 'answered'; status: number; responseEnc: string }
  | { kind: 'other_body' }
  | { kind: 'busy' };

/** A claim of a key: whose key, the request body's hash, the id a fresh claim takes, and how long its lease lasts. */
export interface KeyClaimRequest {
  agentId: string;
  key: string;
  bodyHash: string;
  actionId: string;
  leaseMs: number;
}

interface KeyRow {
  body_hash: string;
  action_id: string;
  response_status: number | null;
  response_enc: string | null;
}

/**
 * Idempotency keys of POST /actions. The primary key (agent, key) makes the database the judge of
 * which caller processes a key; the others wait for its answer. A claim is a lease: if its holder dies, the key
 * is taken over once the lease lapses, with the same action id, so the retry finds or creates the same request. The
 * claim names its holder's database backend: once that backend is gone (the holder's process died and its
 * connections with it, or the database restarted), the key is taken over at once rather than when the lease lapses.
 */
export function createIdempotencyStore(sql: Sql) {
  return {
    async claim({ agentId, key, bodyHash, actionId, leaseMs }: KeyClaimRequest): Promise<KeyClaim> {
      // A key older than 24 h is free again: the new request replaces it.
      const [fresh] = await sql<Array<{ action_id: string }>>`
        insert into actions.idempotency_keys (agent_id, key, body_hash, action_id, claimed_until, holder_pid)
        values (${agentId}, ${key}, ${bodyHash}, ${actionId}, now() + make_interval(secs => ${leaseMs / 1000}),
          pg_backend_pid())
        on conflict (agent_id, key) do update set body_hash = excluded.body_hash, action_id = excluded.action_id,
          claimed_until = excluded.claimed_until, holder_pid = excluded.holder_pid, response_status = null,
          response_enc = null, created_at = now()
        where idempotency_keys.created_at < now() - interval '24 hours'
        returning action_id`;
      if (fresh) return { kind: 'owner', actionId: fresh.action_id };
      const [row] = await sql<KeyRow[]>`
        select body_hash, action_id, response_status, response_enc from actions.idempotency_keys
        where agent_id = ${agentId} and key = ${key} and ${LIVE(sql)}`;
      if (!row) return { kind: 'busy' }; // replaced or pruned in between: the caller claims again
      if (row.body_hash !== bodyHash) return { kind: 'other_body' };
      if (row.response_status !== null)
        return { kind: 'answered', status: row.response_status, responseEnc: row.response_enc! };
      const [taken] = await sql<Array<{ action_id: string }>>`
        update actions.idempotency_keys
        set claimed_until = now() + make_interval(secs => ${leaseMs / 1000}), holder_pid = pg_backend_pid()
        where agent_id = ${agentId} and key = ${key} and response_status is null
          and (claimed_until < now() or not exists (select 1 from pg_stat_get_activity(holder_pid)))
        returning action_id`;
      return taken ? { kind: 'owner', actionId: taken.action_id } : { kind: 'busy' };
    },

    /** Keeps the answer given for a key (status and encrypted body), which every later repeat gets. */
    async answer(agentId: string, key: string, status: number, responseEnc: string): Promise<void> {
      await sql`update actions.idempotency_keys set response_status = ${status}, response_enc = ${responseEnc}
                where agent_id = ${agentId} and key = ${key}`;
    },

    /** Lets the next repeat of a key take over at once (after a failure that left no answer worth keeping). */
    async release(agentId: string, key: string): Promise<void> {
      await sql`update actions.idempotency_keys set claimed_until = now() - interval '1 millisecond'
                where agent_id = ${agentId} and key = ${key} and response_status is null`;
    },

    /** Deletes keys older than 24 h, at most `batch` of them; returns how many. */
    async prune(batch: number): Promise<number> {
      const rows = await sql`
        delete from actions.idempotency_keys where ctid in (
          select ctid from actions.idempotency_keys where created_at < now() - interval '24 hours' limit ${batch})
        returning 1`;
      return rows.length;
    },
  };
}
export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;
