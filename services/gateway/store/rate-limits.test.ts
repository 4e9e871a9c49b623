import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrate, packageDir } from '@agent-auth/db';
import { createTestDatabase } from '../../../test/infra/database.js';
import { migrationsBefore } from '../../../test/infra/migrations.js';
import { createRateLimitStore } from './rate-limits.js';

const migrations = `${packageDir(import.meta.url)}/store/migrations`;
const oneSession = inject('infra').isolatedDatabases ? '' : 'the embedded Postgres runs one session at a time';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the shared rate-limit log (real Postgres)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let store: ReturnType<typeof createRateLimitStore>;
  let seededAt = 0;
  beforeAll(async () => {
    db = await createTestDatabase();
    // The logs as the previous version kept them (one array per identity), then this version's migration.
    await migrate(db.sql as never, { schema: 'gateway', dir: migrationsBefore(migrations, 3) });
    await db.sql`
      insert into gateway.rate_limits (key, hits, last_ms)
      values ('agent:kept', array[(extract(epoch from clock_timestamp()) * 1000)::bigint - 500,
                                  (extract(epoch from clock_timestamp()) * 1000)::bigint - 400],
              (extract(epoch from clock_timestamp()) * 1000)::bigint - 400)`;
    seededAt = Date.now();
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

  const burst = async (key: string, n: number, limit: number, windowMs: number) => {
    const allowed: boolean[] = [];
    for (let i = 0; i < n; i++) allowed.push((await store.hit(key, limit, windowMs)).allowed);
    return allowed;
  };
  const times = (n: number, value: boolean) => Array.from({ length: n }, () => value);

  it('with a large limit (a ring of rows), goes round its ring, counting the same as a plain log', async () => {
    // A limit of 201 in a 4 s window: each burst of 203 is 201 allowed and 2 refused; the next starts once the last
    // entry has left the window, so the second burst writes over the first's slots.
    for (let round = 0; round < 2; round++) {
      expect(await burst('agent:ring', 203, 201, 4000)).toEqual([...times(201, true), false, false]);
      await sleep(4100);
    }
    const [head] = await db.sql<Array<{ next_seq: string; ring: number }>>`
      select next_seq, ring from gateway.rate_limit_heads where key = 'agent:ring'`;
    expect([Number(head!.next_seq), head!.ring]).toEqual([402, 201]);
    const slots = await db.sql`select count(*)::int as n from gateway.rate_limit_slots where key = 'agent:ring'`;
    expect(slots[0]!.n).toBe(201);
  });

  it('with a large limit, frees a slot exactly as the oldest leaves the window, and keeps every entry when the limit is changed', async () => {
    expect(await burst('agent:changed', 2, 205, 3000)).toEqual([true, true]);
    await sleep(500);
    expect(await burst('agent:changed', 203, 205, 3000)).toEqual(times(203, true));
    const full = await store.hit('agent:changed', 205, 3000);
    expect([full.allowed, full.remaining]).toEqual([false, 0]);
    // The oldest of the first two frees a slot: made about 0.5 s (and the 203 checks) before the others.
    expect(full.resetMs).toBeLessThanOrEqual(2500);
    // Lowered to 203 (still a ring): 205 in the window, so a slot frees only when three have left it, the oldest two
    // and then one made 0.5 s after them.
    const lower = await store.hit('agent:changed', 203, 3000);
    expect([lower.allowed, lower.remaining]).toEqual([false, 0]);
    expect(lower.resetMs).toBeGreaterThan(full.resetMs + 300);
    // Raised to 208: the ring is laid out again with all 205, and three more are allowed.
    const higher = await store.hit('agent:changed', 208, 3000);
    expect([higher.allowed, higher.remaining]).toEqual([true, 2]);
    expect(await burst('agent:changed', 3, 208, 3000)).toEqual([true, true, false]);
    // Once the oldest two have left the window, two slots free, no more.
    await sleep(full.resetMs + 100);
    expect(await burst('agent:changed', 3, 208, 3000)).toEqual([true, true, false]);
  });

  it("keeps the previous version's logs, and moves an identity's entries between the two forms when its limit crosses 200", async () => {
    // Kept in place under a small limit: two entries already in the window.
    const small = await store.hit('agent:kept', 3, 60_000);
    expect([small.allowed, small.remaining]).toEqual([true, 0]);
    // The oldest was 500 ms old when the log was written: it frees 59.5 s after that (a new log: 60 s from now).
    const sinceSeeded = Date.now() - seededAt;
    expect(small.resetMs).toBeGreaterThan(59_500 - sinceSeeded - 1_000);
    expect(small.resetMs).toBeLessThanOrEqual(59_500 - sinceSeeded + 100);
    // Under a limit of 300 the three go into a ring, and the fourth joins them there.
    const large = await store.hit('agent:kept', 300, 60_000);
    expect([large.allowed, large.remaining]).toEqual([true, 296]);
    expect((await db.sql`select count(*)::int as n from gateway.rate_limits where key = 'agent:kept'`)[0]!.n).toBe(0);
    expect((await db.sql`select count(*)::int as n from gateway.rate_limit_slots where key = 'agent:kept'`)[0]!.n).toBe(
      4,
    );
    // And back: under 5, four are in the window and the fifth is the last.
    const back = await store.hit('agent:kept', 5, 60_000);
    expect([back.allowed, back.remaining]).toEqual([true, 0]);
    expect(back.resetMs).toBeLessThanOrEqual(59_500 - sinceSeeded + 100);
    expect((await store.hit('agent:kept', 5, 60_000)).allowed).toBe(false);
    expect((await db.sql`select count(*)::int as n from gateway.rate_limit_heads where key = 'agent:kept'`)[0]!.n).toBe(
      0,
    );
  });

  it.skipIf(oneSession)(
    `never allows more than the limit to requests racing from two replicas, in either form${oneSession ? ` (skipped: ${oneSession})` : ''}`,
    async () => {
      const other = postgres(db.url, { max: 4, onnotice: () => {} });
      try {
        const replicas = [store, createRateLimitStore(other as never)];
        for (const limit of [25, 225]) {
          const outcomes = await Promise.all(
            Array.from({ length: limit + 15 }, (_, i) => replicas[i % 2]!.hit(`agent:raced${limit}`, limit, 60_000)),
          );
          const allowed = outcomes.filter((o) => o.allowed);
          expect(allowed).toHaveLength(limit);
          expect(allowed.map((o) => o.remaining).sort((a, b) => a - b)).toEqual(
            Array.from({ length: limit }, (_, i) => i),
          );
        }
      } finally {
        await other.end();
      }
    },
  );

  it('forgets identities idle for a window, in either form, and only those', async () => {
    await store.hit('ip:idle', 10, 60_000);
    await store.hit('agent:idle', 500, 60_000);
    await db.sql`update gateway.rate_limits set last_ms = last_ms - 120000 where key = 'ip:idle'`;
    await db.sql`update gateway.rate_limit_heads set last_ms = last_ms - 120000 where key = 'agent:idle'`;
    await store.hit('ip:busy', 10, 60_000);
    await store.hit('agent:busy', 500, 60_000);
    expect(await store.forgetIdle(60_000)).toBeGreaterThanOrEqual(2);
    const keys = (
      await db.sql<Array<{ key: string }>>`
        select key from gateway.rate_limits union all select key from gateway.rate_limit_heads
        union all select key from gateway.rate_limit_slots`
    ).map((k) => k.key);
    expect(keys).not.toContain('ip:idle');
    expect(keys).not.toContain('agent:idle');
    expect(keys).toContain('ip:busy');
    expect(keys).toContain('agent:busy');
  });
});
