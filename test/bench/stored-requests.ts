// Stored requests for the `create` case (BENCH_CREATE_STORED): a deployment's tables hold months of requests, and
// what an insert costs depends on how large the indexes it writes have grown (docs/capacity.md "Indexes on the
// request path"). Each contender's database gets the same number of older requests, with ids in the service's own
// form (their time first, so older ids sort before new ones), before the contenders first start.
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { migrate } from '@agent-auth/db';

/** Requests stored in each contender's database before the `create` case runs (default none). */
export const STORED_REQUESTS = Number(process.env.BENCH_CREATE_STORED ?? 0);

const ACTIONS_MIGRATIONS = fileURLToPath(new URL('../../services/actions/store/migrations', import.meta.url));

/** An id older than any the service makes today: act_0 and nineteen digits, in creation order. */
const storedId = `'act_0' || lpad(g::text, 19, '0')`;
const storedAt = (n: number) => `now() - make_interval(secs => (${n} - g) * 2.5 + 3600)`;

async function withSql(databaseUrl: string, use: (sql: postgres.Sql) => Promise<void>): Promise<void> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    await use(sql);
    await sql`vacuum analyze`;
    await sql`checkpoint`;
  } finally {
    await sql.end();
  }
}

/**
 * Stores `n` decided requests of another account in a service's database, each with its creation event sealed into
 * that account's chain, and the sealer's cursor past them (nothing left to seal, as in a deployment that keeps up).
 * Runs the actions service's migrations first: the service, started afterwards, finds them applied.
 */
export async function storeServiceRequests(databaseUrl: string, n: number): Promise<void> {
  await withSql(databaseUrl, async (sql) => {
    await migrate(sql as never, { schema: 'actions', dir: ACTIONS_MIGRATIONS });
    await sql.begin(async (tx) => {
      await tx.unsafe(`
        insert into actions.requests (id, account_id, agent_id, action_type, title, risk_level, risk_rank, reversible,
          amount_cents, currency, status, resolved_by, resolved_at, created_at, expires_at)
        select ${storedId}, 'acc_stored', 'agt_stored', 'purchase', 'Stored request ' || g, 'medium', 1, true, 999,
          'USD', 'approved', 'user', ${storedAt(n)} + interval '1 minute', ${storedAt(n)},
          ${storedAt(n)} + interval '10 minutes'
        from generate_series(1, ${n}) g`);
      await tx.unsafe(`
        insert into actions.audit_events (request_id, account_id, event, actor, detail, at)
        select id, account_id, 'created', 'agent:agt_stored', '{}', created_at from actions.requests order by created_at`);
      // Not a verifiable chain (the hashes are placeholders): these events stand in for sealed ones, by size.
      await tx.unsafe(`
        insert into actions.audit_chain (account_id, seq, event_id, prev_hash, hash)
        select account_id, row_number() over (order by id), id, repeat('0', 64), repeat('f', 64)
        from actions.audit_events`);
      await tx.unsafe(`
        update actions.audit_horizon set sealed_tx = pg_current_xact_id(),
          sealed_id = coalesce((select max(id) from actions.audit_events), 0)`);
    });
  });
}

/** Stores `n` requests in the reference server's table (which the server made at its start). */
export async function storeReferenceRequests(databaseUrl: string, n: number): Promise<void> {
  await withSql(databaseUrl, async (sql) => {
    await sql.unsafe(`
      insert into reference_requests (id, agent_id, action_type, title, risk_level, amount_cents, currency, status,
        created_at)
      select ${storedId}, 'agt_stored', 'purchase', 'Stored request ' || g, 'medium', 999, 'USD', 'approved',
        ${storedAt(n)}
      from generate_series(1, ${n}) g`);
  });
}
