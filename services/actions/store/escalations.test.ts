import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionEventInput } from '@agent-auth/contracts';
import { migrate, packageDir } from '@agent-auth/db';
import { createTestDatabase } from '../../../test/infra/database.js';
import { createEscalationStore } from './escalations.js';

describe('escalations (real Postgres)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let pools: postgres.Sql[];
  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.sql as never, { schema: 'actions', dir: `${packageDir(import.meta.url)}/store/migrations` });
    await db.sql`insert into actions.accounts (id) values ('acc_1')`;
    await db.sql`insert into actions.agents (id, account_id, name, key_id, key_hash, webhook_secret_enc) values ('agt_1', 'acc_1', 'bot', 'k1', 'h', 'w')`;
    await db.sql`insert into actions.members (id, account_id, name, email, role, removed_at) values
      ('mem_ada', 'acc_1', 'Ada', 'ada@example.com', 'admin', null),
      ('mem_dana', 'acc_1', 'Dana', null, 'approver', null),
      ('mem_gone', 'acc_1', 'Gone', 'gone@example.com', 'admin', now())`;
    const request = (id: string, escalateAt: string, expiresAt = "now() + interval '1 hour'") =>
      db.sql.unsafe(`insert into actions.requests (id, account_id, agent_id, action_type, title, risk_level, risk_rank,
          reversible, currency, status, expires_at, approvers, escalate_at, escalate_to)
        values ('${id}', 'acc_1', 'agt_1', 'purchase', 't', 'low', 0, true, 'USD', 'pending', ${expiresAt},
          array['mem_dana'], ${escalateAt}, array['role:admin'])`);
    for (let i = 0; i < 40; i++) await request(`act_due${i}`, "now() - interval '1 second'");
    await request('act_later', "now() + interval '1 hour'");
    await request('act_expired', "now() - interval '1 second'", "now() - interval '1 millisecond'");
    pools = [postgres(db.url, { max: 4, onnotice: () => {} }), postgres(db.url, { max: 4, onnotice: () => {} })];
  });
  afterAll(async () => {
    await Promise.all((pools ?? []).map((p) => p.end()));
    await db?.drop();
  });

  it('escalates each due request exactly once however many replicas look at once, with its audit entry and event', async () => {
    const events: ActionEventInput[] = [];
    const stores = pools.flatMap((sql) =>
      [0, 1].map(() => createEscalationStore(sql as never, (e) => events.push(...e))),
    );
    const escalated: string[] = [];
    await Promise.all(
      stores.map(async (store) => {
        for (let done = await store.escalateDue(7); done.length; done = await store.escalateDue(7))
          escalated.push(...done.map((r) => r.id));
      }),
    );
    const due = Array.from({ length: 40 }, (_, i) => `act_due${i}`);
    expect(escalated.sort()).toEqual(due.sort());
    const audit = await db.sql<Array<{ request_id: string; detail: Record<string, unknown> }>>`
      select request_id, detail from actions.audit_events where event = 'escalated' order by request_id`;
    expect(audit.map((a) => a.request_id).sort()).toEqual(due.sort());
    expect(audit[0]!.detail).toMatchObject({ escalate_to: ['role:admin'], member_ids: ['mem_ada'] });
    expect(events).toHaveLength(40);
    expect(events[0]).toMatchObject({
      type: 'action.escalated',
      escalation: {
        escalate_to: ['role:admin'],
        members: [{ member_id: 'mem_ada', name: 'Ada', email: 'ada@example.com' }],
      },
    });
    // Neither the one not due yet nor the one past its expiry; the next is due in about an hour.
    const left = await db.sql`select id from actions.requests where escalated_at is null order by id`;
    expect(left.map((r) => r.id)).toEqual(['act_expired', 'act_later']);
    const next = await stores[0]!.nextDueInMs();
    expect(next).toBeGreaterThan(3_500_000);
    expect(next).toBeLessThanOrEqual(3_600_000);
    // With nothing left to escalate there is no next one: not "due now", which would keep the schedulers looking.
    await db.sql`update actions.requests set escalated_at = now() where id = 'act_later'`;
    expect(await stores[0]!.nextDueInMs()).toBeNull();
  });
});
