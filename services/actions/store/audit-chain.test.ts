import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrate, packageDir } from '@agent-auth/db';
import { createTestDatabase } from '../../../test/infra/database.js';
import { createAuditChainStore } from './audit-chain.js';

// These hold a transaction open in one session while another seals: the embedded Postgres runs one at a time.
const oneSession = inject('infra').isolatedDatabases ? '' : 'the embedded Postgres runs one session at a time';
const skipped = oneSession ? ` (skipped: ${oneSession})` : '';

describe('audit chain sealing by horizon (real Postgres)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.sql as never, { schema: 'actions', dir: `${packageDir(import.meta.url)}/store/migrations` });
  });
  afterAll(async () => db?.drop());

  const write = (sql: typeof db.sql, account: string, event: string) =>
    sql`insert into actions.audit_events (account_id, event, actor) values (${account}, ${event}, 'agent:agt_1')`;
  const chainOf = async (account: string) =>
    (
      await db.sql<Array<{ event: string; seq: number }>>`
        select e.event, c.seq::int as seq from actions.audit_chain c join actions.audit_events e on e.id = c.event_id
        where c.account_id = ${account} order by c.seq`
    ).map((r) => [r.seq, r.event]);
  const waiting = async () => (await db.sql`select count(*)::int as n from actions.audit_unsealed`)[0]!.n as number;
  // The horizon is the server's: another test's transaction running at the moment holds a round back, briefly.
  const sealAll = async (store: ReturnType<typeof createAuditChainStore>, batch: number) => {
    const rounds: Array<[number, boolean]> = [];
    for (let attempt = 0; attempt < 400 && (await waiting()) > 0; attempt++) {
      const round = await store.seal(batch);
      if (round.sealedAt.length) rounds.push([round.sealedAt.length, round.full]);
      else await new Promise((r) => setTimeout(r, 5));
    }
    return rounds;
  };

  it.skipIf(oneSession)(
    `seals nothing past a transaction still running, then chains its event before the later ones${skipped}`,
    async () => {
      const store = createAuditChainStore(db.sql as never);
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let wrote!: () => void;
      const written = new Promise<void>((resolve) => (wrote = resolve));
      // The older transaction writes first and stays open; a later one writes and commits meanwhile.
      const older = db.sql.begin(async (tx) => {
        await write(tx as never, 'acc_h', 'older');
        wrote();
        await held;
      });
      await written;
      await write(db.sql, 'acc_h', 'later');
      const whileRunning = await store.seal(100);
      expect(whileRunning.sealedAt).toHaveLength(0);
      expect(await waiting()).toBe(1); // the later one waits; the older one is not visible yet
      release();
      await older;
      expect((await sealAll(store, 100)).reduce((n, [count]) => n + count, 0)).toBe(2);
      expect(await chainOf('acc_h')).toEqual([
        [1, 'older'],
        [2, 'later'],
      ]);
      expect(await waiting()).toBe(0);
    },
  );

  it('seals in batches across accounts, each account one gapless chain, every event once', async () => {
    const store = createAuditChainStore(db.sql as never);
    for (let i = 0; i < 5; i++) await write(db.sql, i % 2 ? 'acc_y' : 'acc_x', `e${i}`);
    const rounds = await sealAll(store, 2);
    expect(rounds.reduce((n, [count]) => n + count, 0)).toBe(5);
    for (const [count, full] of rounds) expect(full).toBe(count === 2);
    expect(await chainOf('acc_x')).toEqual([
      [1, 'e0'],
      [2, 'e2'],
      [3, 'e4'],
    ]);
    expect(await chainOf('acc_y')).toEqual([
      [1, 'e1'],
      [2, 'e3'],
    ]);
    expect((await store.seal(2)).sealedAt).toHaveLength(0);
  });

  it('a store whose kept chain heads another sealer has passed reads them again', async () => {
    const [first, second] = [createAuditChainStore(db.sql as never), createAuditChainStore(db.sql as never)];
    await write(db.sql, 'acc_k', 'k1');
    await sealAll(first, 100);
    await write(db.sql, 'acc_k', 'k2');
    await sealAll(second, 100);
    await write(db.sql, 'acc_k', 'k3');
    await sealAll(first, 100);
    expect(await chainOf('acc_k')).toEqual([
      [1, 'k1'],
      [2, 'k2'],
      [3, 'k3'],
    ]);
  });

  it.skipIf(oneSession)(
    `of two sealers that read the same cursor, the one overtaken writes nothing and says so${skipped}`,
    async () => {
      await write(db.sql, 'acc_z', 'z1');
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let sealed!: () => void;
      const isSealed = new Promise<void>((resolve) => (sealed = resolve));
      // A replica's round, written but not yet committed: it holds the cursor's row.
      const replica = db.sql.begin(async (tx) => {
        const store = createAuditChainStore(tx as never);
        let round = await store.seal(100);
        // Another test's transaction running at the moment holds the horizon back, briefly.
        for (let i = 0; i < 400 && !round.sealedAt.length; i++) {
          await new Promise((r) => setTimeout(r, 5));
          round = await store.seal(100);
        }
        expect(round.sealedAt).toHaveLength(1);
        sealed();
        await held;
      });
      await isSealed;
      // A session of its own: the file's two are the replica's and the one that watches.
      const own = postgres(db.url, { max: 1, onnotice: () => {} });
      const overtaken = createAuditChainStore(own as never).seal(100);
      // Its write waits for the replica's row; once the replica commits, the cursor it read is gone.
      for (let i = 0; i < 400; i++) {
        const [{ n }] = await db.sql<[{ n: number }]>`
          select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`;
        if (n > 0) break;
        await new Promise((r) => setTimeout(r, 5));
      }
      release();
      await replica;
      expect(await overtaken).toEqual({ sealedAt: [], full: false, horizon: null });
      await own.end();
      expect(await chainOf('acc_z')).toEqual([[1, 'z1']]);
    },
  );
});
