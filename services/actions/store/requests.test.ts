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
