import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { handleOnce, onceByCall } from '@agent-auth/bus';
import { confidential, defineEndpoint } from '@agent-auth/contracts';
import { connectDatabase, type Sql } from '@agent-auth/db';
import { createLogger } from '@agent-auth/logging';
import { AppError } from '@agent-auth/errors';
import { createTestDatabase } from '../../test/infra/database.js';
import { createCallOutcomes } from './call-outcomes.js';

const log = createLogger({ service: 'call-outcomes-test', level: 'silent' });
const effect = defineEndpoint('oncetest', 'effect', z.object({ n: z.number() }), z.object({ made: z.number() }));

describe("a service's effects kept per call", () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let sql: Sql;
  beforeAll(async () => {
    db = await createTestDatabase();
    sql = connectDatabase(db.url, { max: 2 });
    await sql`create schema if not exists oncetest`;
  });
  afterAll(async () => {
    await sql?.end();
    await db?.drop();
  });

  it('answers a send again with the first outcome, waits for one still at work, and keeps refusals too', async () => {
    const store = await createCallOutcomes(sql, 'oncetest', log);
    let made = 0;
    const bound = onceByCall(
      handleOnce(effect, async ({ n }) => {
        if (n < 0) throw new AppError(404, 'rule_not_found', 'gone');
        await new Promise((r) => setTimeout(r, n));
        return { made: ++made };
      }),
      store,
    );
    const ctx = (callId: string, resent = false) => ({ requestId: 'r', log, callId, resent });
    expect(await bound.handler({ n: 0 }, ctx('call-1'))).toEqual({ made: 1 });
    expect(await bound.handler({ n: 0 }, ctx('call-1', true))).toEqual({ made: 1 });
    // Sent again while the first send is still at work: the second waits for its outcome.
    const [first, again] = await Promise.all([
      bound.handler({ n: 300 }, ctx('call-2')),
      new Promise((r) => setTimeout(r, 50)).then(() => bound.handler({ n: 300 }, ctx('call-2', true))),
    ]);
    expect([first, again]).toEqual([{ made: 2 }, { made: 2 }]);
    await expect(bound.handler({ n: -1 }, ctx('call-3'))).rejects.toMatchObject({ status: 404 });
    await expect(bound.handler({ n: -1 }, ctx('call-3', true))).rejects.toMatchObject({ code: 'rule_not_found' });
    expect(made).toBe(2);
    // Made again by a second replica starting: the table is there already.
    (await createCallOutcomes(sql, 'oncetest', log)).stop();
    store.stop();
  });

  const minted = confidential(
    defineEndpoint('oncetest', 'mint', z.object({}), z.object({ api_key: z.string(), n: z.number() })),
  );

  it("keeps a confidential answer sealed with the call's key, which a resend brings, and never in the clear", async () => {
    const store = await createCallOutcomes(sql, 'oncetest', log);
    let n = 0;
    const bound = onceByCall(
      handleOnce(minted, async () => ({ api_key: `ak_${randomBytes(12).toString('hex')}`, n: ++n })),
      store,
    );
    const key = randomBytes(32).toString('base64');
    const ctx = (callId: string, resent = false, callKey: string | null = key) => ({
      requestId: 'r',
      log,
      callId,
      resent,
      callKey: callKey ?? undefined,
    });
    const first = (await bound.handler({}, ctx('mint-1'))) as { api_key: string };
    // The resend gets the credential the first send made, not a second one.
    expect(await bound.handler({}, ctx('mint-1', true))).toEqual(first);
    expect(n).toBe(1);
    const [row] = await sql<Array<{ text: string }>>`
      select outcome::text as text from oncetest.call_outcomes where call_id = 'mint-1'`;
    expect(row!.text).not.toContain(first.api_key);
    expect(row!.text).toMatch(/"sealed": "v1:call:/);
    // Another key does not open it (and the call is served afresh rather than answered with nothing).
    const other = randomBytes(32).toString('base64');
    expect(await bound.handler({}, ctx('mint-1', true, other))).not.toEqual(first);
    // A call without a key (a requester that sends none) runs as it is, and nothing is kept for it.
    await bound.handler({}, ctx('mint-2', false, null));
    expect((await sql`select 1 from oncetest.call_outcomes where call_id = 'mint-2'`).length).toBe(0);
    store.stop();
  });

  /** A call taken by another replica's connection, which then goes away (its process died, the database restarted). */
  const takenByAGoneReplica = async (callId: string) => {
    const other = connectDatabase(db.url, { max: 1 });
    const [{ pid }] = (await other`select pg_backend_pid() as pid`) as unknown as [{ pid: number }];
    const store = await createCallOutcomes(other, 'oncetest', log);
    store.stop();
    expect(await store.take(callId, 'oncetest.effect')).toBe(true);
    await sql`select pg_terminate_backend(${pid})`;
    await other.end({ timeout: 1 });
  };

  it('serves at once a call whose holder is gone, and waits for one whose holder is alive and at work', async () => {
    const store = await createCallOutcomes(sql, 'oncetest', log);
    await takenByAGoneReplica('gone-1');
    let started = performance.now();
    expect(await store.take('gone-1', 'oncetest.effect')).toBe(false);
    expect(await store.awaitOutcome('gone-1')).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(500);
    // Taken over: a second send after it waits for this replica's outcome instead of serving it too.
    const waiting = store.awaitOutcome('gone-1');
    await store.keep('gone-1', { ok: true, data: { made: 7 } });
    expect(await waiting).toEqual({ ok: true, data: { made: 7 } });

    // A live holder that takes longer than a moment (a vault call): its outcome is waited for, not served twice.
    expect(await store.take('slow-1', 'oncetest.effect')).toBe(true);
    started = performance.now();
    setTimeout(() => void store.keep('slow-1', { ok: true, data: { made: 8 } }), 2000);
    expect(await store.awaitOutcome('slow-1')).toEqual({ ok: true, data: { made: 8 } });
    expect(performance.now() - started).toBeGreaterThan(1900);
    store.stop();
  });
});
