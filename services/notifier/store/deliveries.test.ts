import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, packageDir } from '@agent-auth/db';
import { createTestDatabase } from '../../../test/infra/database.js';
import { createDeliveryStore } from './deliveries.js';

describe('delivery retention (real Postgres)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.sql as never, { schema: 'notifier', dir: `${packageDir(import.meta.url)}/store/migrations` });
  });
  afterAll(async () => db?.drop());

  async function delivery(id: string, state: string, finishedDaysAgo: number | null, audited: boolean) {
    const finished = finishedDaysAgo === null ? null : new Date(Date.now() - finishedDaysAgo * 86_400_000);
    await db.sql`insert into notifier.deliveries (webhook_id, request_id, account_id, agent_id, callback_url, body, state, attempts, finished_at)
      values (${id}, ${`act_${id}`}, 'acc_1', 'agt_1', 'https://example.com/hook', '{}', ${state}, 1, ${finished})`;
    await db.sql`insert into notifier.attempts (webhook_id, attempt, latency_ms, outcome, audited_at)
      values (${id}, 1, 5, ${state === 'pending' ? 'retrying' : state}, ${audited ? new Date() : null})`;
  }

  it('prunes finished deliveries past retention with their attempts; keeps recent, pending and not-yet-audited ones', async () => {
    await delivery('msg_old_delivered', 'delivered', 40, true);
    await delivery('msg_old_failed', 'failed', 31, true);
    await delivery('msg_old_unaudited', 'delivered', 40, false);
    await delivery('msg_recent', 'delivered', 1, true);
    await delivery('msg_pending', 'pending', null, true);
    const store = createDeliveryStore(db.sql as never);
    const cutoff = new Date(Date.now() - 30 * 86_400_000);

    expect(await store.pruneFinished(cutoff, 1)).toBe(1); // batches are bounded
    expect(await store.pruneFinished(cutoff, 100)).toBe(1);
    expect(await store.pruneFinished(cutoff, 100)).toBe(0);
    const left = await db.sql`select webhook_id from notifier.deliveries order by webhook_id`;
    expect(left.map((r) => r.webhook_id)).toEqual(['msg_old_unaudited', 'msg_pending', 'msg_recent']);
    const attempts = await db.sql`select webhook_id from notifier.attempts order by webhook_id`;
    expect(attempts.map((r) => r.webhook_id)).toEqual(['msg_old_unaudited', 'msg_pending', 'msg_recent']);
  });
});
