// Reads at scale: one agent with BENCH_SCALE_REQUESTS (default 1,000,000) stored requests, seeded in SQL, and a few
// hundred pending ones created through the API (with encrypted metadata, as a device's list shows them). Measures
// p50/p99 of GET /actions (plain, each filter, both filters, deep in the list by cursor), GET /pending and
// GET /account at BENCH_SCALE_CONNECTIONS (default 4) for BENCH_SCALE_SECONDS (default 5) each: first on the
// requests table as it was before partitioning (one table), then after converting that same table online to monthly
// partitions (migration 060's functions, as the partition keeper runs them), so both are measured on the same rows;
// partitioned, the service's lists read the newest month first and older ones only while a page is not full.
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import {
  listSegments,
  pendingIdFloor,
  type Segment,
  segmentOf,
  segmentsFrom,
} from '../../services/actions/domain/list-segments.js';
import { LAYOUT_TTL_MS } from '../../services/actions/store/request-list.js';
import { apiClient } from '../harness/http.js';
import { startStack, type StackMode } from '../harness/stack.js';
import { loadGet, out, table, withDatabase, type BenchCase, type Figures } from './load.js';

const STORED = Number(process.env.BENCH_SCALE_REQUESTS ?? 1_000_000);
const PENDING = Number(process.env.BENCH_SCALE_PENDING ?? 300);
const options = {
  connections: Number(process.env.BENCH_SCALE_CONNECTIONS ?? 4),
  seconds: Number(process.env.BENCH_SCALE_SECONDS ?? 5),
};
// BENCH_SCALE_LISTS: a comma list of substrings; only the lists whose name contains one are measured (profiling).
const MODE = (process.env.BENCH_SCALE_MODE ?? 'all-in-one') as StackMode;
/** How far back the seeded requests go: a year, so that after partitioning they fill thirteen months. */
const SPAN_SECONDS = 365 * 86_400;
/** Turns of each list query on either table in the interleaved comparison (BENCH_SCALE_INTERLEAVED). */
const INTERLEAVED_ROUNDS = Number(process.env.BENCH_SCALE_INTERLEAVED ?? 300);

/**
 * The requests table as it was before partitioning: one table with the same columns and indexes (and the indexes'
 * names), in place of the partitioned one the service's migrations made of the empty table.
 */
async function unpartition(sql: postgres.Sql): Promise<void> {
  const INDEX_NAME_AND_TABLE = '^CREATE (UNIQUE )?INDEX \\S+ ON (ONLY )?\\S+ ';
  await sql.begin(async (tx) => {
    await tx`create table actions.requests_flat (like actions.requests including all)`;
    const names = await tx<Array<{ name: string; body: string }>>`
      select c.relname as name, regexp_replace(pg_get_indexdef(i.indexrelid), ${INDEX_NAME_AND_TABLE}, '') as body
      from pg_index i join pg_class c on c.oid = i.indexrelid where i.indrelid = 'actions.requests'::regclass`;
    await tx`drop table actions.requests`;
    await tx`alter table actions.requests_flat rename to requests`;
    for (const { name, body } of names) {
      const [flat] = await tx<Array<{ name: string }>>`
        select c.relname as name from pg_index i join pg_class c on c.oid = i.indexrelid
        where i.indrelid = 'actions.requests'::regclass
          and regexp_replace(pg_get_indexdef(i.indexrelid), ${INDEX_NAME_AND_TABLE}, '') = ${body}`;
      await tx.unsafe(`alter index actions."${flat!.name}" rename to "${name}"`);
    }
  });
}

/** Converts the table to monthly partitions online, as the partition keeper does; answers how long it took. */
async function partition(sql: postgres.Sql): Promise<{ seconds: number; swapMs: number }> {
  const started = Date.now();
  await sql`select actions.begin_requests_partitioning()`;
  while ((await sql<Array<{ n: number }>>`select actions.backfill_requests(5000) as n`)[0]!.n > 0);
  const swap = performance.now();
  await sql`select actions.finish_requests_partitioning()`;
  const swapMs = performance.now() - swap;
  await sql`analyze actions.requests`;
  return { seconds: (Date.now() - started) / 1000, swapMs };
}

/** Where the service's walk reads on the partitioned table (store/request-list.ts), as SQL conditions on `id`. */
interface WalkRanges {
  /** The first read of a list: this month's partition with those ahead. */
  first: string;
  /** The first read of a list of pending requests (only ids from the pending floor on). */
  pending: string;
  /** The first read after the middle cursor: its month. */
  cursor: string;
}

/** The months of the partitioned table, and the segments the walk reads first, as the service computes them. */
async function walkRanges(sql: postgres.Sql, cursorId: string): Promise<WalkRanges> {
  const rows = await sql<Array<{ from_id: string | null; below_id: string | null }>>`
    select substring(b from ${String.raw`FROM \('([^']*)'\)`}) as from_id,
      substring(b from ${String.raw` TO \('([^']*)'\)`}) as below_id
    from (select pg_get_expr(c.relpartbound, c.oid) as b from pg_inherits i join pg_class c on c.oid = i.inhrelid
          where i.inhparent = 'actions.requests'::regclass) as parts`;
  const months = rows.flatMap((r) => (r.from_id && r.below_id ? [{ from: r.from_id, below: r.below_id }] : []));
  const now = Date.now();
  const segments = listSegments(months, now);
  const text = (segment: Segment) =>
    segment
      .map((r) => [r.from && `id >= '${r.from}'`, r.below && `id < '${r.below}'`].filter(Boolean).join(' and '))
      .map((c) => `(${c})`)
      .join(' or ');
  return {
    first: text(segments[0]!),
    pending: text(segmentsFrom(segments, pendingIdFloor(now))[0]!),
    cursor: text(segments[segmentOf(segments, cursorId)!]!),
  };
}

/**
 * The list queries of the actions store (store/requests.ts, store/request-list.ts), each as SQL on a table named by
 * TABLE: on the one table as they run there, on the partitioned one as the walk's first read (when `ranges`).
 */
function listQueries(
  agentId: string,
  accountId: string,
  cursor: { created_at: string; id: string },
  ranges?: WalkRanges,
) {
  const within = (range: keyof WalkRanges) => (ranges ? `and (${ranges[range]})` : '');
  const list = (where: string, range: keyof WalkRanges = 'first') =>
    `select *, to_char(created_at at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as position from TABLE
     where agent_id = '${agentId}' ${where} ${within(range)} order by created_at desc, id desc limit 50`;
  return [
    ['GET /actions', list('')],
    ['?status=pending', list(`and status = 'pending'`, 'pending')],
    ['?status=denied', list(`and status = 'denied'`)],
    ['?action_type=legal&status=expired', list(`and action_type = 'legal' and status = 'expired'`)],
    [
      '?cursor=(middle)',
      list(`and (created_at, id) < ('${cursor.created_at}'::timestamptz, '${cursor.id}')`, 'cursor'),
    ],
    [
      '/pending heads',
      `select id, quorum_approvals from TABLE where account_id = '${accountId}' and status = 'pending'
       and expires_at > now() ${ranges ? `and id >= '${pendingIdFloor(Date.now())}'` : ''}
       order by risk_rank desc, created_at asc, id asc limit 500`,
    ],
  ] as const;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

/**
 * The database's own time for each list query on the one table (a copy kept from before the conversion) and on the
 * partitioned one as the walk reads it first, taking turns query by query so that the machine's load falls on both
 * alike.
 */
async function interleaved(
  sql: postgres.Sql,
  queries: { oneTable: ReturnType<typeof listQueries>; partitioned: ReturnType<typeof listQueries> },
  rounds: number,
) {
  for (const [index, [name]] of queries.oneTable.entries()) {
    const times: Record<'one table' | 'partitioned', number[]> = { 'one table': [], partitioned: [] };
    for (let i = 0; i < rounds; i++) {
      for (const [side, text] of [
        ['one table', queries.oneTable[index]![1].replace('TABLE', 'actions.requests_one_table')],
        ['partitioned', queries.partitioned[index]![1].replace('TABLE', 'actions.requests')],
      ] as const) {
        const began = performance.now();
        await sql.unsafe(text, [], { prepare: true });
        times[side].push(performance.now() - began);
      }
    }
    const describe = (side: keyof typeof times) => {
      const sorted = times[side].sort((a, b) => a - b);
      return `p50 ${percentile(sorted, 0.5).toFixed(2)} / p99 ${percentile(sorted, 0.99).toFixed(2)} ms`;
    };
    out(`  ${name.padEnd(40)} one table ${describe('one table')}; partitioned ${describe('partitioned')}`);
  }
}

/**
 * Resolved requests of every type, newest a few seconds ago, oldest a year back, with ids as the service makes them
 * (their time first): one INSERT … SELECT.
 */
async function seed(sql: postgres.Sql, account: { account_id: string; agent_id: string }): Promise<void> {
  const step = SPAN_SECONDS / STORED;
  await sql`
    insert into actions.requests (id, account_id, agent_id, action_type, title, risk_level, risk_rank, reversible,
      amount_cents, currency, status, resolved_by, resolved_at, created_at, expires_at)
    select 'act_' || actions.time_prefix((extract(epoch from t) * 1000)::bigint) || lpad(g::text, 11, '0'),
      ${account.account_id}, ${account.agent_id},
      (array['communication','purchase','scheduling','legal','data_access','social','system'])[1 + g % 7],
      'Seeded request ' || g, (array['low','medium','high','critical'])[1 + g % 4], g % 4, true,
      case when g % 3 = 0 then (g % 10000) + 1 end, 'USD',
      (array['approved','approved','approved','denied','denied','expired'])[1 + g % 6],
      case when g % 6 < 3 then 'user' when g % 6 < 5 then 'rule:seed' else 'system' end,
      t + interval '1 minute', t, t + interval '5 minutes'
    from generate_series(1, ${STORED}::int) g,
      lateral (select now() - make_interval(secs => g * ${step}::float8) as t) as at`;
  await sql`analyze actions.requests`;
}

/** A cursor from the middle of the list (the same encoding the service gives out as next_cursor). */
async function middleCursor(sql: postgres.Sql, agentId: string): Promise<string> {
  const [row] = await sql<Array<{ position: string; id: string }>>`
    select to_char(created_at at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as position, id
    from actions.requests where agent_id = ${agentId} order by created_at desc, id desc offset ${Math.floor(STORED / 2)} limit 1`;
  return Buffer.from(`${row!.position}|${row!.id}`).toString('base64url');
}

export const scaleBench: BenchCase = {
  name: 'scale',
  description: `GET /actions, /pending, /account with ${STORED.toLocaleString('en')} stored requests and ${PENDING} pending (${MODE})`,
  async run(infra) {
    const rows = await withDatabase(infra, async (databaseUrl) => {
      const stack = await startStack({
        mode: MODE,
        databaseUrl,
        natsUrl: infra.natsUrl,
        name: 'bench-scale',
        env: { LOG_REQUESTS: 'false', DB_POOL_SIZE: '10', RATE_LIMITS: 'false' },
      });
      const sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
      try {
        const api = apiClient(stack.baseUrl);
        const account = await api.newAccount();
        await api.device(account.device_id).post('/account/plan', { plan: 'unlimited' });
        await unpartition(sql);
        const started = Date.now();
        await seed(sql, account);
        const agent = api.agent(account.api_key);
        for (let i = 0; i < PENDING; i += 20) {
          await Promise.all(
            Array.from({ length: Math.min(20, PENDING - i) }, (_, j) =>
              agent.post('/actions', {
                action_type: 'purchase',
                title: `Pending ${i + j}`,
                amount: 12.5,
                risk_level: (['low', 'medium', 'high', 'critical'] as const)[(i + j) % 4],
                recipient: 'shop@example.com',
                metadata: { order: `P-${i + j}`, note: 'x'.repeat(200) },
                expires_in_seconds: 3600,
              }),
            ),
          );
        }
        out(
          `  seeded ${STORED.toLocaleString('en')} requests in SQL and ${PENDING} pending through the API in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );
        const cursor = await middleCursor(sql, account.agent_id);
        const agentHeaders = { 'x-api-key': account.api_key };
        const deviceHeaders = { 'x-device-id': account.device_id };
        const lists: Array<[string, string, Record<string, string>]> = [
          ['GET /actions', '/actions', agentHeaders],
          ['GET /actions?status=pending', '/actions?status=pending', agentHeaders],
          ['GET /actions?status=denied', '/actions?status=denied', agentHeaders],
          ['GET /actions?action_type=legal', '/actions?action_type=legal', agentHeaders],
          ['GET /actions?action_type=legal&status=expired', '/actions?action_type=legal&status=expired', agentHeaders],
          [
            'GET /actions?action_type=purchase&status=pending',
            '/actions?action_type=purchase&status=pending',
            agentHeaders,
          ],
          ['GET /actions?cursor=(middle of the list)', `/actions?cursor=${cursor}`, agentHeaders],
          [`GET /pending (${PENDING} pending)`, '/pending', deviceHeaders],
          ['GET /account', '/account', deviceHeaders],
        ];
        const only = process.env.BENCH_SCALE_LISTS?.split(',').filter(Boolean);
        const chosen = only ? lists.filter(([name]) => only.some((o) => name.includes(o))) : lists;
        const measure = async () => {
          const figures: Figures[] = [];
          for (const [name, path, headers] of chosen)
            figures.push(await loadGet(name, `${stack.baseUrl}${path}`, headers, options));
          return figures;
        };
        const before = await measure();
        // A copy of the one table, kept beside the partitioned one for the interleaved comparison below.
        await sql`create table actions.requests_one_table (like actions.requests including all)`;
        await sql`insert into actions.requests_one_table select * from actions.requests`;
        await sql`analyze actions.requests_one_table`;
        const [middle] = await sql<Array<{ created_at: string; id: string }>>`
          select created_at::text, id from actions.requests where agent_id = ${account.agent_id}
          order by created_at desc, id desc offset ${Math.floor(STORED / 2)} limit 1`;
        const converted = await partition(sql);
        const [{ parts }] = await sql<Array<{ parts: number }>>`
          select count(*)::int as parts from pg_inherits where inhparent = 'actions.requests'::regclass`;
        out(
          `  partitioned online in ${converted.seconds.toFixed(1)} s (swap ${converted.swapMs.toFixed(0)} ms): ${parts} partitions`,
        );
        // The service reads the partitions' layout at most this often: past it, its lists walk the months.
        await sleep(LAYOUT_TTL_MS);
        const after = await measure();
        out(`  the database's own time per list query, ${INTERLEAVED_ROUNDS} turns each:`);
        const ranges = await walkRanges(sql, middle!.id);
        await interleaved(
          sql,
          {
            oneTable: listQueries(account.agent_id, account.account_id, middle!),
            partitioned: listQueries(account.agent_id, account.account_id, middle!, ranges),
          },
          INTERLEAVED_ROUNDS,
        );
        await sql`drop table actions.requests_one_table`;
        return { before, after };
      } finally {
        await sql.end();
        await stack.stop();
      }
    });
    out(`  ${options.connections} connections, ${options.seconds} s each; default page size 50`);
    out('  one table (before partitioning):');
    table(rows.before);
    out('  monthly partitions (after, the same rows):');
    table(rows.after);
    const slowest = (figures: Figures[]) => figures.reduce((a, b) => (b.p99 > a.p99 ? b : a));
    const [before, after] = [slowest(rows.before), slowest(rows.after)];
    out(
      `slowest p99: before ${before.p99.toFixed(1)} ms (${before.name}), after ${after.p99.toFixed(1)} ms (${after.name}); ` +
        'goal: every list under 20 ms, and no worse after partitioning',
    );
  },
};
