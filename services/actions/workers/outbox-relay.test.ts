import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessBus, type Bus } from '@agent-auth/bus';
import type { ActionEvent } from '@agent-auth/contracts';
import { migrate, packageDir, vacuumAfterDeletes } from '@agent-auth/db';
import { createLogger } from '@agent-auth/logging';
import { createTestDatabase } from '../../../test/infra/database.js';
import { createOutboxStore } from '../store/outbox.js';
import { createRequestStore } from '../store/requests.js';
import { type OutboxRelay, startOutboxRelay } from './outbox-relay.js';

const log = createLogger({ service: 'outbox-relay-test', level: 'silent' });

describe('outbox relay (real Postgres, in-process stream)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let bus: Bus;
  let relay: OutboxRelay;
  const consumed: ActionEvent[] = [];
  let stopConsumer: () => Promise<void>;

  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.sql as never, { schema: 'actions', dir: `${packageDir(import.meta.url)}/store/migrations` });
    bus = createInProcessBus({ timeoutMs: 1000 });
    const consumer = await bus.actionEvents.consume({
      name: 'test',
      concurrency: 4,
      log,
      handler: async (e) => void consumed.push(e),
    });
    stopConsumer = () => consumer.stop();
    relay = startOutboxRelay({ outbox: createOutboxStore(db.sql as never), stream: bus.actionEvents, pollMs: 50, log });
    await db.sql`insert into actions.requests (id, account_id, agent_id, action_type, title, risk_level, risk_rank,
        reversible, currency, status, expires_at)
      values ('act_r1', 'acc_1', 'agt_1', 'purchase', 't', 'low', 0, true, 'USD', 'pending', now() + interval '1 hour')`;
  });
  afterAll(async () => {
    await relay?.stop();
    await stopConsumer?.();
    await bus?.close();
    await db?.drop();
  });

  const outboxRows = async () => (await db.sql`select count(*)::int as n from actions.outbox`)[0]!.n as number;

  it("hands a statement's event to its writer after the commit, born claimed, and deletes its row once published", async () => {
    const handed: string[] = [];
    const store = createRequestStore(db.sql as never, (events) => {
      handed.push(...events.map((e) => e.id));
      relay.committed(events);
    });
    const resolved = await store.resolve(
      'act_r1',
      'acc_1',
      { status: 'approved', resolved_by: 'device:totp', resolved_at: new Date(), receipt: null },
      { event: 'approved', actor: 'device:dvc_1' },
    );
    expect(resolved).toMatchObject({ id: 'act_r1', status: 'approved' });
    expect(resolved).not.toHaveProperty('outbox_event');
    expect(handed).toHaveLength(1);
    await expect.poll(() => consumed.map((e) => e.id)).toEqual(handed);
    expect(consumed[0]).toMatchObject({ type: 'action.resolved', action: { id: 'act_r1', status: 'approved' } });
    await expect.poll(outboxRows).toBe(0);
  });

  it('publishes, once, an event its writer never published (it crashed after the commit) when its lease ends', async () => {
    consumed.length = 0;
    const dropped: string[] = [];
    const store = createRequestStore(db.sql as never, (events) => void dropped.push(...events.map((e) => e.id)));
    await db.sql`insert into actions.requests (id, account_id, agent_id, action_type, title, risk_level, risk_rank,
        reversible, currency, status, expires_at)
      values ('act_r2', 'acc_1', 'agt_1', 'purchase', 't', 'low', 0, true, 'USD', 'pending', now() + interval '1 hour')`;
    await store.resolve(
      'act_r2',
      'acc_1',
      { status: 'denied', resolved_by: 'device:totp', resolved_at: new Date(), receipt: null },
      { event: 'denied', actor: 'device:dvc_1' },
    );
    expect(dropped).toHaveLength(1);
    // The writer's claim holds the relay off for a while: not published at once...
    await new Promise((r) => setTimeout(r, 500));
    expect(consumed).toHaveLength(0);
    // ...and by the relay once it ends (about five seconds).
    await expect.poll(() => consumed.map((e) => e.id), { timeout: 10_000, interval: 100 }).toEqual(dropped);
    await expect.poll(outboxRows).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(consumed).toHaveLength(1);
  }, 15_000);
});

describe('outbox relay upkeep (real Postgres)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let bus: Bus;
  let relay: OutboxRelay | undefined;
  let stopConsumer: () => Promise<void>;

  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.sql as never, { schema: 'actions', dir: `${packageDir(import.meta.url)}/store/migrations` });
    bus = createInProcessBus({ timeoutMs: 1000 });
    const consumer = await bus.actionEvents.consume({ name: 'test', concurrency: 4, log, handler: async () => {} });
    stopConsumer = () => consumer.stop();
  });
  afterAll(async () => {
    await relay?.stop();
    await stopConsumer?.();
    await bus?.close();
    await db?.drop();
  });

  const vacuums = async () =>
    Number(
      (
        await db.sql`select coalesce(vacuum_count, 0) as n from pg_stat_user_tables
        where schemaname = 'actions' and relname = 'outbox'`
      )[0]?.n ?? 0,
    );
  // Requests resolved through the store, whose events its writer hands the relay (as the service does).
  let stored = 0;
  const resolveRequests = async (n: number) => {
    const store = createRequestStore(db.sql as never, (events) => relay!.committed(events));
    for (let i = 0; i < n; i++) {
      const id = `act_u${stored++}`;
      await db.sql`insert into actions.requests (id, account_id, agent_id, action_type, title, risk_level, risk_rank,
          reversible, currency, status, expires_at)
        values (${id}, 'acc_1', 'agt_1', 'purchase', 't', 'low', 0, true, 'USD', 'pending', now() + interval '1 hour')`;
      await store.resolve(
        id,
        'acc_1',
        { status: 'approved', resolved_by: 'device:totp', resolved_at: new Date(), receipt: null },
        { event: 'approved', actor: 'device:dvc_1' },
      );
    }
  };

  it('vacuums the outbox once it has deleted enough published rows, not before', async () => {
    relay = startOutboxRelay({
      outbox: createOutboxStore(db.sql as never),
      stream: bus.actionEvents,
      pollMs: 20,
      log,
      vacuum: vacuumAfterDeletes({ sql: db.sql as never, table: 'actions.outbox', everyRows: 30, log }),
    });
    const before = await vacuums();
    const rows = async () => (await db.sql`select count(*)::int as n from actions.outbox`)[0]!.n as number;
    await resolveRequests(20);
    await expect.poll(rows, { timeout: 5000 }).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(await vacuums()).toBe(before); // 20 deleted: below the threshold
    await resolveRequests(20);
    await expect.poll(rows, { timeout: 5000 }).toBe(0);
    await expect.poll(vacuums, { timeout: 5000, interval: 100 }).toBe(before + 1); // 40 deleted: one vacuum
  });

  it('leaves the outbox and the idempotency keys uncut by any vacuum (its lock would hold up every create)', async () => {
    const options = await db.sql<Array<{ relname: string; reloptions: string[] | null }>>`
      select relname, reloptions from pg_class where oid in ('actions.outbox'::regclass, 'actions.idempotency_keys'::regclass)
      order by relname`;
    expect(options).toEqual([
      { relname: 'idempotency_keys', reloptions: ['vacuum_truncate=false'] },
      { relname: 'outbox', reloptions: ['vacuum_truncate=false'] },
    ]);
  });
});
