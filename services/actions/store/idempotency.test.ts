import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, migrate, packageDir } from '@agent-auth/db';
import { createTestDatabase } from '../../../test/infra/database.js';
import { createIdempotencyStore } from './idempotency.js';

describe('Idempotency-Key claims (real Postgres)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.sql as never, { schema: 'actions', dir: `${packageDir(import.meta.url)}/store/migrations` });
  });
  afterAll(async () => db?.drop());

  const claim = (store: ReturnType<typeof createIdempotencyStore>, key: string, actionId: string) =>
    store.claim({ agentId: 'agt_1', key, bodyHash: 'h', actionId, leaseMs: 60_000 });

  it("takes a key over at once when its holder's connection is gone, and not while it is there", async () => {
    const store = createIdempotencyStore(db.sql as never);
    // A replica claims a key, then dies with it (its connections close) or the database restarts under it.
    const holder = connectDatabase(db.url, { max: 1 });
    const [{ pid }] = (await holder`select pg_backend_pid() as pid`) as unknown as [{ pid: number }];
    expect(await claim(createIdempotencyStore(holder), 'k-gone', 'act_first')).toEqual({
      kind: 'owner',
      actionId: 'act_first',
    });
    // While its holder is connected, a repeat waits (within the minute's lease).
    expect(await claim(store, 'k-gone', 'act_second')).toEqual({ kind: 'busy' });
    await db.sql`select pg_terminate_backend(${pid})`;
    await holder.end({ timeout: 1 });
    // Gone: taken over at once, under the action id the first claim fixed, and only once.
    expect(await claim(store, 'k-gone', 'act_third')).toEqual({ kind: 'owner', actionId: 'act_first' });
    expect(await claim(store, 'k-gone', 'act_fourth')).toEqual({ kind: 'busy' });
  });
});
