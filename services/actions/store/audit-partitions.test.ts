import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAuditChain } from '@agent-auth/client';
import { migrate, packageDir } from '@agent-auth/db';
import { createTestDatabase } from '../../../test/infra/database.js';
import { migrationsBefore } from '../../../test/infra/migrations.js';
import { secondSession } from '../../../test/harness/sessions.js';
import { chainEach, type UnsealedEvent } from '../domain/audit-chain.js';
import { generateReceiptKeySpec, parseReceiptKeys } from '../domain/receipt-keys.js';
import { createAuditChainStore } from './audit-chain.js';
import { createPartitionStore } from './table-partitions.js';

const ROWS = Number(process.env.AUDIT_PARTITIONING_ROWS ?? 30_000);
const ACCOUNTS = 20;
const MIGRATIONS = `${packageDir(import.meta.url)}/store/migrations`;

describe.skipIf(secondSession)(
  `audit trail partitioned by month, converted online from ${ROWS.toLocaleString('en')} stored${secondSession ? ` (skipped: ${secondSession})` : ''}`,
  () => {
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    const contentSum = async (table: 'audit_events' | 'audit_chain', where = 'true') =>
      (
        await db.sql.unsafe<Array<{ sum: string; n: number }>>(
          table === 'audit_events'
            ? `select md5(string_agg(id || account_id || event || detail::text || at, ',' order by id)) as sum,
                 count(*)::int as n from actions.audit_events where ${where}`
            : `select md5(string_agg(event_id || account_id || seq || prev_hash || hash, ',' order by event_id)) as sum,
                 count(*)::int as n from actions.audit_chain where ${where}`,
        )
      )[0]!;

    beforeAll(async () => {
      db = await createTestDatabase();
      await migrate(db.sql as never, { schema: 'actions', dir: migrationsBefore(MIGRATIONS, 65) });
      // A trail written over the past year, as the identity column numbered it, and sealed: each event's place
      // computed as the sealer computes it (domain/audit-chain.ts), a batch at a time, and the cursor moved past.
      await db.sql`
        insert into actions.audit_events (account_id, request_id, event, actor, detail, at)
        select 'acc_' || (g % ${ACCOUNTS}), 'act_stored' || g, 'created', 'agent:agt_1', jsonb_build_object('n', g),
          now() - interval '365 days' + (g::float / ${ROWS}) * interval '364 days'
        from generate_series(1, ${ROWS}::int) g`;
      const heads = new Map<string, { seq: number; hash: string }>();
      for (let after = '0'; ; ) {
        const events = await db.sql<Array<UnsealedEvent & { account_id: string }>>`
          select id, account_id, request_id, event, actor, detail, at from actions.audit_events
          where id > ${after} order by id limit 5000`;
        if (!events.length) break;
        const chained = chainEach(events, heads);
        for (const c of chained) heads.set(c.account_id, { seq: c.seq, hash: c.hash });
        await db.sql`
          insert into actions.audit_chain (account_id, seq, event_id, prev_hash, hash)
          select * from unnest(${chained.map((c) => c.account_id)}::text[], ${chained.map((c) => String(c.seq))}::bigint[],
            ${chained.map((c) => c.id)}::bigint[], ${chained.map((c) => c.prev_hash)}::text[], ${chained.map((c) => c.hash)}::text[])`;
        after = events[events.length - 1]!.id;
      }
      await db.sql`update actions.audit_horizon set (sealed_tx, sealed_id) = (select tx, id from actions.audit_events order by tx desc, id desc limit 1)`;
      await db.sql`vacuum analyze actions.audit_events`;
      await db.sql`vacuum analyze actions.audit_chain`;
    }, 600_000);
    afterAll(async () => db?.drop());

    it('keeps every event and every place through the swaps, beside events written and sealed meanwhile', async () => {
      const [events, places] = [await contentSum('audit_events'), await contentSum('audit_chain')];
      expect([events.n, places.n]).toEqual([ROWS, ROWS]);
      await migrate(db.sql as never, { schema: 'actions', dir: MIGRATIONS });
      const kind = async (table: string) =>
        (
          await db.sql<
            Array<{ k: string }>
          >`select relkind::text as k from pg_class where oid = ${`actions.${table}`}::regclass`
        )[0]!.k;
      // Too large to convert at once: the old tables serve until each swap.
      expect([await kind('audit_events'), await kind('audit_chain')]).toEqual(['r', 'r']);

      // Events written (with ids that begin with their time now) and sealed throughout, each write timed.
      const chain = createAuditChainStore(db.sql as never);
      let writing = true;
      let longestWriteMs = 0;
      let written = 0;
      const writer = (async () => {
        for (let i = 0; writing; i++) {
          const began = performance.now();
          await db.sql`insert into actions.audit_events (account_id, event, actor) values (${`acc_${i % ACCOUNTS}`}, 'new', 'agent:agt_1')`;
          written++;
          if (i % 5 === 4) await chain.seal(100);
          longestWriteMs = Math.max(longestWriteMs, performance.now() - began);
          await sleep(2);
        }
      })();
      const tables = [
        createPartitionStore(db.sql as never, 'audit_events'),
        createPartitionStore(db.sql as never, 'audit_chain'),
      ];
      for (const partitions of tables) {
        let copied = 0;
        for (let n = -1; n !== 0; copied += n) n = await partitions.backfill(5_000);
        expect(copied).toBeGreaterThanOrEqual(ROWS);
        // Two replicas finishing together: one swaps, the other finds it done.
        expect((await Promise.all([partitions.finishConversion(), partitions.finishConversion()])).sort()).toEqual([
          false,
          true,
        ]);
        expect(await partitions.converting()).toBe(false);
      }
      await sleep(100);
      writing = false;
      await writer;
      console.info(
        `audit trail partitioned: ${ROWS.toLocaleString('en')} events and places copied beside ${written} events written; longest write ${longestWriteMs.toFixed(0)} ms`,
      );

      expect([await kind('audit_events'), await kind('audit_chain')]).toEqual(['p', 'p']);
      expect(await contentSum('audit_events', `event <> 'new'`)).toEqual(events);
      expect(await contentSum('audit_chain', `event_id <= ${ROWS}`)).toEqual(places);
      const [fresh] = await db.sql<[{ n: number; older: number }]>`
        select count(*)::int as n, count(*) filter (where tableoid = 'actions.audit_events_older'::regclass)::int as older
        from actions.audit_events where event = 'new'`;
      expect(fresh).toEqual({ n: written, older: 0 });
      // The stored trail is in the partition of older ids (its ids do not begin with a time).
      const [stored] = await db.sql<[{ parts: string[] }]>`
        select array_agg(distinct tableoid::regclass::text) as parts from actions.audit_events where event <> 'new'`;
      expect(stored!.parts).toEqual(['actions.audit_events_older']);
      // The old tables are gone; the new ones have their indexes' names, their triggers and the view on them.
      const indexes = await db.sql<Array<{ name: string }>>`
        select indexrelid::regclass::text as name from pg_index
        where indrelid in ('actions.audit_events'::regclass, 'actions.audit_chain'::regclass) order by 1`;
      expect(indexes.map((i) => i.name)).toEqual([
        'actions.audit_chain_account_id_seq_idx',
        'actions.audit_chain_event_idx',
        'actions.audit_events_pkey',
        'actions.audit_events_request_idx',
        'actions.audit_events_tx_idx',
      ]);
      await expect(db.sql`update actions.audit_events set actor = 'x' where id = 1`).rejects.toThrow(/append-only/);
      await expect(db.sql`delete from actions.audit_chain where event_id = 1`).rejects.toThrow(/append-only/);
      expect(await db.sql`select to_regclass('actions.audit_events_unpartitioned') as t`).toEqual([{ t: null }]);
      expect(longestWriteMs).toBeLessThan(2_000);
    }, 900_000);

    it('seals what is left, and every account’s chain verifies from its first event with the client’s verifier', async () => {
      const receiptKeys = await parseReceiptKeys(generateReceiptKeySpec('r1'));
      const chain = createAuditChainStore(db.sql as never);
      const waiting = async () => (await db.sql`select count(*)::int as n from actions.audit_unsealed`)[0]!.n as number;
      for (let attempt = 0; attempt < 400 && (await waiting()) > 0; attempt++)
        if (!(await chain.seal(1000)).sealedAt.length) await sleep(5);
      expect(await waiting()).toBe(0);
      for (const account of ['acc_0', 'acc_7']) {
        const last = (await chain.head(account))!;
        const signed = { account_id: account, seq: last.seq, hash: last.hash, at: last.at };
        const head = { seq: last.seq, hash: last.hash, at: last.at, signature: await receiptKeys.signHead(signed) };
        const events = [];
        for (
          let page = await chain.page(account, 0, 500);
          page.length;
          page = await chain.page(account, page.at(-1)!.seq, 500)
        )
          events.push(...page);
        expect(events.length).toBeGreaterThan(ROWS / ACCOUNTS);
        expect(await verifyAuditChain(events, head, receiptKeys.jwks())).toMatchObject({ head_seq: events.length });
      }
    });
  },
);
