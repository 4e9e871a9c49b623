import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, packageDir } from '@agent-auth/db';
import { newId } from '@agent-auth/contracts';
import { createTestDatabase } from '../../../test/infra/database.js';
import { migrationsBefore } from '../../../test/infra/migrations.js';
import { secondSession } from '../../../test/harness/sessions.js';
import { createRequestPartitionStore } from './table-partitions.js';
import { createRequestStore } from './requests.js';

const ROWS = Number(process.env.REQUESTS_PARTITIONING_ROWS ?? 30_000);
const MIGRATIONS = `${packageDir(import.meta.url)}/store/migrations`;
const DAY_MS = 86_400_000;

describe.skipIf(secondSession)(
  `requests partitioned by month, converted online from ${ROWS.toLocaleString('en')} stored${secondSession ? ` (skipped: ${secondSession})` : ''}`,
  () => {
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    beforeAll(async () => {
      db = await createTestDatabase();
      await migrate(db.sql as never, { schema: 'actions', dir: migrationsBefore(MIGRATIONS, 60) });
      await db.sql`insert into actions.accounts (id) values ('acc_p')`;
      // Requests of the past 14 months, oldest first, with ids as the service makes them (their time first); and a
      // few with the random ids of before ids began with their time.
      await db.sql`
        insert into actions.requests (id, account_id, agent_id, action_type, title, risk_level, risk_rank, reversible,
          currency, status, created_at, expires_at)
        select 'act_' || actions.time_prefix((extract(epoch from t) * 1000)::bigint) || lpad(g::text, 11, '0'),
          'acc_p', 'agt_p', 'purchase', 'stored ' || g, 'low', 0, true, 'USD',
          case when g % 3 = 0 then 'denied' else 'approved' end, t, t + interval '5 minutes'
        from generate_series(1, ${ROWS}::int) g,
          lateral (select now() - interval '425 days' + (g::float / ${ROWS}) * interval '424 days' as t) at`;
      await db.sql`
        insert into actions.requests (id, account_id, agent_id, action_type, title, risk_level, risk_rank, reversible,
          currency, status, created_at, expires_at)
        values ('act_LegacyRandomId00001', 'acc_p', 'agt_p', 'purchase', 'legacy 1', 'low', 0, true, 'USD', 'approved',
                now() - interval '500 days', now()),
               ('act_0aLegacyRandomId002', 'acc_p', 'agt_p', 'purchase', 'legacy 2', 'low', 0, true, 'USD', 'approved',
                now() - interval '500 days', now())`;
      await db.sql`vacuum analyze actions.requests`;
    }, 600_000);
    afterAll(async () => db?.drop());

    it('keeps every request, and every write made meanwhile, through the swap; writes wait only for the swap', async () => {
      const expected = await db.sql<Array<{ sum: string }>>`
        select md5(string_agg(id || status || title, ',' order by id)) as sum from actions.requests`;
      await migrate(db.sql as never, { schema: 'actions', dir: MIGRATIONS });
      const kind = async () =>
        (
          await db.sql<
            Array<{ k: string }>
          >`select relkind::text as k from pg_class where oid = 'actions.requests'::regclass`
        )[0]!.k;
      expect(await kind()).toBe('r'); // too large to convert at once: the old table serves until the swap

      // Creates and decisions go on throughout, each timed.
      let writing = true;
      let longestWriteMs = 0;
      const created: string[] = [];
      const decided = new Set<string>();
      const writer = (async () => {
        for (let i = 0; writing; i++) {
          const began = performance.now();
          const id = newId('action');
          await db.sql`
            insert into actions.requests (id, account_id, agent_id, action_type, title, risk_level, risk_rank,
              reversible, currency, status, created_at, expires_at)
            values (${id}, 'acc_p', 'agt_p', 'purchase', ${`new ${i}`}, 'low', 0, true, 'USD', 'pending', now(),
              now() + interval '1 hour')`;
          created.push(id);
          if (i % 2 === 1) {
            const target = created[i - 1]!;
            await db.sql`update actions.requests set status = 'approved', resolved_at = now() where id = ${target}`;
            decided.add(target);
          }
          longestWriteMs = Math.max(longestWriteMs, performance.now() - began);
          await sleep(2);
        }
      })();

      const partitions = createRequestPartitionStore(db.sql as never);
      const started = Date.now();
      let copied = 0;
      for (let n = -1; n !== 0; copied += n) n = await partitions.backfill(5_000);
      const swapStarted = performance.now();
      // Two replicas finishing together: one swaps, the other finds it done (before or after waiting for the lock).
      const finished = await Promise.all([partitions.finishConversion(), partitions.finishConversion()]);
      expect(finished.sort()).toEqual([false, true]);
      const swapMs = performance.now() - swapStarted;
      await sleep(100);
      writing = false;
      await writer;
      console.info(
        `requests partitioned: ${copied.toLocaleString('en')} rows copied in ${((Date.now() - started) / 1000).toFixed(1)} s ` +
          `beside ${created.length} creates and ${decided.size} decisions; swap and analyze ${swapMs.toFixed(0)} ms, longest write ${longestWriteMs.toFixed(0)} ms`,
      );

      expect(await kind()).toBe('p');
      expect(await partitions.converting()).toBe(false);
      expect(copied).toBeGreaterThanOrEqual(ROWS);
      const [before] = await db.sql<Array<{ sum: string }>>`
        select md5(string_agg(id || status || title, ',' order by id)) as sum from actions.requests
        where title not like 'new %'`;
      expect(before!.sum).toBe(expected[0]!.sum);
      const fresh = await db.sql<Array<{ id: string; status: string }>>`
        select id, status from actions.requests where title like 'new %'`;
      expect(fresh.map((r) => r.id).sort()).toEqual([...created].sort());
      for (const row of fresh) expect(row.status, row.id).toBe(decided.has(row.id) ? 'approved' : 'pending');
      // The old table is gone; the partitioned one has its name and its indexes' names.
      const indexes = await db.sql<Array<{ name: string }>>`
        select indexrelid::regclass::text as name from pg_index where indrelid = 'actions.requests'::regclass order by 1`;
      expect(indexes.map((i) => i.name)).toEqual(
        expect.arrayContaining([
          'actions.requests_pkey',
          'actions.requests_agent_list_idx',
          'actions.requests_pending_idx',
          'actions.requests_expiry_idx',
          // Made on both tables while converting (migration 080), named as the old table's by the swap.
          'actions.requests_escalation_due_idx',
        ]),
      );
      expect((await db.sql`select to_regclass('actions.requests_unpartitioned') as t`)[0]!.t).toBeNull();
      // Writes waited for the swap only, not for the copy.
      expect(longestWriteMs).toBeLessThan(Math.max(2_000, swapMs + 1_000));
    }, 900_000);

    it('puts each request in its month, reads one by id from its partition alone, and lists through each partition’s index', async () => {
      const parts = await db.sql<Array<{ name: string; n: number }>>`
        select tableoid::regclass::text as name, count(*)::int as n from actions.requests group by 1 order by 1`;
      expect(parts.length).toBeGreaterThanOrEqual(13);
      const placed = await db.sql<Array<{ id: string; part: string }>>`
        select id, tableoid::regclass::text as part from actions.requests where title like 'legacy %' order by id`;
      expect(placed.map((p) => p.part)).toEqual(['actions.requests_older', 'actions.requests_default']);

      const [one] = await db.sql<Array<{ id: string }>>`select id from actions.requests where title = 'stored 7'`;
      const plan = (await db.sql.unsafe(`explain select * from actions.requests where id = '${one!.id}'`))
        .map((r) => r['QUERY PLAN'] as string)
        .join('\n');
      expect(plan.match(/on requests_/g)).toHaveLength(1);

      const store = createRequestStore(db.sql as never);
      const page = await store.listForAgent('agt_p', { limit: 50 });
      expect(page).toHaveLength(50);
      const times = page.map((r) => r.position);
      expect([...times].sort().reverse()).toEqual(times);
      const listPlan = (
        await db.sql.unsafe(
          `explain select id from actions.requests where agent_id = 'agt_p' order by created_at desc, id desc limit 50`,
        )
      )
        .map((r) => r['QUERY PLAN'] as string)
        .join('\n');
      expect(listPlan).toMatch(/Merge Append/);
      expect(listPlan).toMatch(/Index (Only )?Scan Backward using requests_m\d{4}_\d{2}_agent/);
      expect(listPlan).not.toMatch(/Seq Scan/);
      // /pending: the partial indexes of pending requests, within each partition.
      const pendingPlan = (
        await db.sql.unsafe(
          `explain select id from actions.requests where account_id = 'acc_p' and status = 'pending' and expires_at > now()
           order by risk_rank desc, created_at asc, id asc limit 500`,
        )
      )
        .map((r) => r['QUERY PLAN'] as string)
        .join('\n');
      // (A partition with next to nothing in it, a month ahead, is read whole: nothing to walk.)
      const thisMonth = new Date().toISOString().slice(0, 7).replace('-', '_');
      // Either of its partial indexes of pending requests (the list's, or the sweeper's by expiry), in an index scan
      // (`using <index> on <table>`) or a bitmap one (`on <index>`), as the planner's estimates fall.
      expect(pendingPlan).toMatch(
        new RegExp(`(using|on) requests_m${thisMonth}_(account_id_risk_rank_created_at|expires_at)_idx`),
      );
    });

    it('makes the coming months ahead and drops the months past the retention', async () => {
      const partitions = createRequestPartitionStore(db.sql as never);
      await partitions.addMonthsAhead();
      const ahead = new Date(Date.now() + 62 * DAY_MS).toISOString().slice(0, 7).replace('-', '_');
      expect((await db.sql`select to_regclass(${`actions.requests_m${ahead}`}) as t`)[0]!.t).not.toBeNull();

      const count = async () =>
        (await db.sql<Array<{ n: number }>>`select count(*)::int as n from actions.requests`)[0]!.n;
      const all = await count();
      const dropped = await partitions.dropOlderThan(200);
      expect(dropped).toContain('requests_older');
      expect(dropped.length).toBeGreaterThanOrEqual(6);
      const [oldest] = await db.sql<Array<{ at: Date }>>`select min(created_at) as at from actions.requests`;
      // Whole months go: nothing older than the cutoff's month is left, and nothing of the last 200 days is gone.
      expect(Date.now() - oldest!.at.getTime()).toBeLessThan(232 * DAY_MS);
      const [kept] = await db.sql<Array<{ n: number }>>`
        select count(*)::int as n from actions.requests where created_at >= now() - interval '200 days'`;
      expect(await count()).toBeLessThan(all);
      expect(kept!.n).toBeGreaterThan(0);
      expect(await partitions.dropOlderThan(200)).toEqual([]);
    });
  },
);

describe('requests partitioned at once when few are stored (real Postgres)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db?.drop());

  it('is partitioned by the migration itself, with this month and two ahead, and a repeated id still fails', async () => {
    await migrate(db.sql as never, { schema: 'actions', dir: MIGRATIONS });
    const [table] = await db.sql<Array<{ k: string; twin: string | null }>>`
      select relkind::text as k, to_regclass('actions.requests_partitioned')::text as twin
      from pg_class where oid = 'actions.requests'::regclass`;
    expect(table).toEqual({ k: 'p', twin: null });
    const months = await db.sql<Array<{ name: string }>>`
      select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'actions.requests'::regclass and c.relname like 'requests_m%'`;
    expect(months.length).toBe(3);
    const insert = (id: string) => db.sql`
      insert into actions.requests (id, account_id, agent_id, action_type, title, risk_level, risk_rank, reversible,
        currency, status, created_at, expires_at)
      values (${id}, 'acc_q', 'agt_q', 'purchase', 't', 'low', 0, true, 'USD', 'pending', now(), now())`;
    const id = newId('action');
    await insert(id);
    await expect(insert(id)).rejects.toMatchObject({ code: '23505' });
  });
});
