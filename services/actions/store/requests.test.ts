import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, packageDir } from '@agent-auth/db';
import { createTestDatabase } from '../../../test/infra/database.js';
import { createRequestStore } from './requests.js';

describe('request list pages (real Postgres)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.sql as never, { schema: 'actions', dir: `${packageDir(import.meta.url)}/store/migrations` });
  });
  afterAll(async () => db?.drop());

  it('walks every request once, in order, when several share a millisecond or a microsecond', async () => {
    await db.sql`insert into actions.accounts (id) values ('acc_1')`;
    await db.sql`insert into actions.agents (id, account_id, name, key_id, key_hash, webhook_secret_enc) values ('agt_1', 'acc_1', 'bot', 'k1', 'h', 'w')`;
    // Microseconds apart within one millisecond, and two at the very same microsecond (the id breaks the tie).
    const times = ['.123001', '.123002', '.123002', '.123500', '.123999', '.124000', '.124000', '.124001'];
    for (const [i, fraction] of times.entries()) {
      await db.sql`insert into actions.requests (id, account_id, agent_id, action_type, title, risk_level, risk_rank, reversible,
        currency, status, created_at, expires_at)
        values (${`act_${i}x`}, 'acc_1', 'agt_1', 'purchase', 't', 'low', 0, true, 'USD', 'approved',
          ${`2026-11-23T09:03:40${fraction}Z`}::text::timestamptz, now())`;
    }
    const store = createRequestStore(db.sql as never);
    const everything = (await store.listForAgent('agt_1', { limit: 50 })).map((r) => r.id);
    expect(everything).toHaveLength(8);
    const walked: string[] = [];
    let after: { created_at: string; id: string } | undefined;
    for (let page = 0; page < 8; page++) {
      const rows = await store.listForAgent('agt_1', { limit: 3, after });
      walked.push(...rows.map((r) => r.id));
      if (rows.length < 3) break;
      after = { created_at: rows[2]!.position, id: rows[2]!.id };
    }
    expect(walked).toEqual(everything);
  });
});

describe('vault execution claims (real Postgres)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.sql as never, { schema: 'actions', dir: `${packageDir(import.meta.url)}/store/migrations` });
    await db.sql`insert into actions.accounts (id) values ('acc_1')`;
    await db.sql`insert into actions.agents (id, account_id, name, key_id, key_hash, webhook_secret_enc) values ('agt_1', 'acc_1', 'bot', 'k1', 'h', 'w')`;
    await db.sql`insert into actions.requests (id, account_id, agent_id, action_type, title, risk_level, risk_rank, reversible,
        currency, status, content_hash, expires_at)
        values ('act_v', 'acc_1', 'agt_1', 'api_call', 't', 'low', 0, true, 'USD', 'approved', 'h', now() + interval '1 hour')`;
  });
  afterAll(async () => db?.drop());

  const started = { event: 'execution_started', actor: 'agent:agt_1' };
  const released = { event: 'execution_released', actor: 'agent:agt_1' };
  const startedEntries = async () =>
    (
      await db.sql`select count(*)::int as n from actions.audit_events where request_id = 'act_v' and event = 'execution_started'`
    )[0]!.n;

  it('gives a claim whose answer was lost back to the same claim, once audited, and refuses every other claim', async () => {
    const store = createRequestStore(db.sql as never);
    expect((await store.claimExecution('act_v', 'agt_1', 'clm_a', started))?.id).toBe('act_v');
    // The executor asks again after the bus lost the answer: the same claim gets the request, nothing is re-audited.
    expect((await store.claimExecution('act_v', 'agt_1', 'clm_a', started))?.id).toBe('act_v');
    expect(await startedEntries()).toBe(1);
    expect(await store.claimExecution('act_v', 'agt_1', 'clm_b', started)).toBeUndefined();
    // Another attempt cannot give back a claim it does not hold (the holder may be calling the upstream).
    expect(await store.releaseExecution('act_v', 'agt_1', 'clm_b', released)).toBe(false);
    expect(await store.releaseExecution('act_v', 'agt_1', 'clm_a', released)).toBe(true);
    // Given back: the approval is usable again, by a new claim, and the old one no longer holds anything.
    expect(await store.claimExecution('act_v', 'agt_1', 'clm_a', started)).toBeDefined();
    expect(await store.releaseExecution('act_v', 'agt_1', 'clm_a', released)).toBe(true);
    expect((await store.claimExecution('act_v', 'agt_1', 'clm_c', started))?.id).toBe('act_v');
    expect(await store.claimExecution('act_v', 'agt_1', 'clm_a', started)).toBeUndefined();
  });
});
