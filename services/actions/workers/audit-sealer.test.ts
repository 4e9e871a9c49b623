import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEventHash, ZERO_HASH } from '@agent-auth/contracts';
import { migrate, packageDir } from '@agent-auth/db';
import { createLogger } from '@agent-auth/logging';
import { createTestDatabase } from '../../../test/infra/database.js';
import { createAuditChainStore } from '../store/audit-chain.js';
import { startAuditSealer } from './audit-sealer.js';

const log = createLogger({ service: 'audit-sealer-test', level: 'silent' });

describe('audit sealer (real Postgres)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.sql as never, { schema: 'actions', dir: `${packageDir(import.meta.url)}/store/migrations` });
  });
  afterAll(async () => db?.drop());

  it('seals a backlog larger than a round, round after round, into unbroken per-account chains', async () => {
    const accounts = ['acc_sealer_a', 'acc_sealer_b'];
    const events = Array.from({ length: 250 }, (_, i) => ({ account_id: accounts[i % 2]!, event: `e${i}` }));
    await db.sql`insert into actions.audit_events (account_id, event, actor)
      select a, e, 'agent:agt_1' from unnest(${events.map((e) => e.account_id)}::text[], ${events.map((e) => e.event)}::text[]) as x(a, e)`;
    const chain = createAuditChainStore(db.sql as never);
    const sealer = startAuditSealer({ chain, intervalMs: 20, log, roundEvents: 40 });
    try {
      const sealed = async () => (await db.sql`select count(*)::int as n from actions.audit_chain`)[0]!.n as number;
      await expect.poll(sealed, { timeout: 10_000, interval: 20 }).toBe(250);
    } finally {
      await sealer.stop();
    }
    for (const account of accounts) {
      const page = await chain.page(account, 0, 500);
      expect(page.map((e) => e.seq)).toEqual(Array.from({ length: 125 }, (_, i) => i + 1));
      // In the order written, each linked to the one before and hashed over its own content.
      expect(page.map((e) => e.type)).toEqual(events.filter((e) => e.account_id === account).map((e) => e.event));
      page.forEach((e, i) => {
        expect(e.prev_hash).toBe(i === 0 ? ZERO_HASH : page[i - 1]!.hash);
        const { hash, ...unhashed } = e;
        expect(auditEventHash(unhashed)).toBe(hash);
      });
    }
  });
});
