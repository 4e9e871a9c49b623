import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrate, packageDir } from '@agent-auth/db';
import { createTestDatabase } from '../../../test/infra/database.js';
import { createRateLimitStore } from './rate-limits.js';

const migrations = `${packageDir(import.meta.url)}/store/migrations`;
const oneSession = inject('infra').isolatedDatabases ? '' : 'the embedded Postgres runs one session at a time';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the shared rate-limit log (real Postgres)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let store: ReturnType<typeof createRateLimitStore>;
  beforeAll(async () => {
    db = await createTestDatabase();
    // The logs as the previous version kept them (one array per identity), then this version's migration.
    const before = mkdtempSync(join(tmpdir(), 'rl-migrations-'));
    for (const file of ['001_rate_limits.sql', '002_unlogged_rate_limits.sql'])
      cpSync(join(migrations, file), join(before, file));
    await migrate(db.sql as never, { schema: 'gateway', dir: before });
    await db.sql`
      insert into gateway.rate_limits (key, hits, last_ms)
      values ('agent:kept', array[(extract(epoch from clock_timestamp()) * 1000)::bigint - 500,
                                  (extract(epoch from clock_timestamp()) * 1000)::bigint - 400],
              (extract(epoch from clock_timestamp()) * 1000)::bigint - 400)`;
    await migrate(db.sql as never, { schema: 'gateway', dir: migrations });
    store = createRateLimitStore(db.sql as never);
  });
  afterAll(async () => db?.drop());

  it('allows exactly the limit in a window, then frees slots as the oldest requests leave it', async () => {
    const hits = [await store.hit('device:a', 3, 1000)];
    await sleep(400);
    for (let i = 0; i < 3; i++) hits.push(await store.hit('device:a', 3, 1000));
    expect(hits.map((h) => [h.allowed, h.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    // The first frees its slot 1 s after it was made, about 0.6 s from now.
    expect(hits[3]!.resetMs).toBeGreaterThan(100);
    expect(hits[3]!.resetMs).toBeLessThanOrEqual(600);
    await sleep(hits[3]!.resetMs + 50);
    // The first left the window; the refused one took no slot.
    const after = await store.hit('device:a', 3, 1000);
    expect([after.allowed, after.remaining]).toEqual([true, 0]);
    expect((await store.hit('device:a', 3, 1000)).allowed).toBe(false);
  });

  it('goes round its ring many times over, counting the same as a plain log', async () => {
    // A 400 ms window and a limit of 4: each burst of 6 is 4 allowed, 2 refused, and the window empties between.
    for (let burst = 0; burst < 5; burst++) {
      const allowed = [];
      for (let i = 0; i < 6; i++) allowed.push((await store.hit('agent:ring', 4, 400)).allowed);
      expect(allowed).toEqual([true, true, true, true, false, false]);
      await sleep(450);
    }
    const [head] = await db.sql<Array<{ next_seq: string }>>`
      select next_seq from gateway.rate_limit_heads where key = 'agent:ring'`;
    expect(Number(head!.next_seq)).toBe(20);
  });

  it('keeps every request the window holds when the limit is changed: lower refuses at once, higher allows the difference', async () => {
    for (let i = 0; i < 2; i++) expect((await store.hit('agent:changed', 5, 2000)).allowed).toBe(true);
    await sleep(500);
    for (let i = 0; i < 3; i++) expect((await store.hit('agent:changed', 5, 2000)).allowed).toBe(true);
    const lower = await store.hit('agent:changed', 3, 2000);
    expect([lower.allowed, lower.remaining]).toEqual([false, 0]);
    // Refused until all but limit - 1 have left the window: the third oldest frees the slot, made just now (the
    // oldest two were made 0.5 s earlier).
    expect(lower.resetMs).toBeGreaterThan(1700);
    expect(lower.resetMs).toBeLessThanOrEqual(2000);
    const higher = await store.hit('agent:changed', 8, 2000);
    expect([higher.allowed, higher.remaining]).toEqual([true, 2]);
    expect((await store.hit('agent:changed', 8, 2000)).allowed).toBe(true);
    expect((await store.hit('agent:changed', 8, 2000)).allowed).toBe(true);
    expect((await store.hit('agent:changed', 8, 2000)).allowed).toBe(false);
  });

  it("carries over the previous version's logs", async () => {
    const next = await store.hit('agent:kept', 3, 60_000);
    expect([next.allowed, next.remaining]).toEqual([true, 0]);
    // The oldest kept entry was 500 ms old when it was carried over: it frees in less than 59.5 s (a new log: 60).
    expect(next.resetMs).toBeGreaterThan(50_000);
    expect(next.resetMs).toBeLessThanOrEqual(59_600);
    expect((await store.hit('agent:kept', 3, 60_000)).allowed).toBe(false);
    expect((await db.sql`select count(*)::int as n from gateway.rate_limits`)[0]!.n).toBe(0);
  });

  it.skipIf(oneSession)(
    `never allows more than the limit to requests racing from two replicas${oneSession ? ` (skipped: ${oneSession})` : ''}`,
    async () => {
      const other = postgres(db.url, { max: 4, onnotice: () => {} });
      try {
        const replicas = [store, createRateLimitStore(other as never)];
        const outcomes = await Promise.all(
          Array.from({ length: 40 }, (_, i) => replicas[i % 2]!.hit('agent:raced', 25, 60_000)),
        );
        expect(outcomes.filter((o) => o.allowed)).toHaveLength(25);
        expect(
          outcomes
            .filter((o) => o.allowed)
            .map((o) => o.remaining)
            .sort((a, b) => a - b),
        ).toEqual(Array.from({ length: 25 }, (_, i) => i));
      } finally {
        await other.end();
      }
    },
  );

  it('forgets identities idle for a window, and only those', async () => {
    await store.hit('ip:idle', 10, 60_000);
    await db.sql`update gateway.rate_limit_heads set last_ms = last_ms - 120000 where key = 'ip:idle'`;
    await store.hit('ip:busy', 10, 60_000);
    expect(await store.forgetIdle(60_000)).toBeGreaterThanOrEqual(1);
    const keys = await db.sql<Array<{ key: string }>>`
      select key from gateway.rate_limit_heads union all select key from gateway.rate_limit_slots`;
    expect(keys.map((k) => k.key)).not.toContain('ip:idle');
    expect(keys.map((k) => k.key)).toContain('ip:busy');
  });
});
