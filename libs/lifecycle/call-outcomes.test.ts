import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { handleOnce, onceByCall } from '@agent-auth/bus';
import { defineEndpoint } from '@agent-auth/contracts';
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
});
