import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, packageDir } from '@agent-auth/db';
import { createTestDatabase } from '../../../test/infra/database.js';
import { migrationsBefore } from '../../../test/infra/migrations.js';
import { createIdentityStore } from './identities.js';
import { createMemberStore } from './members.js';

const MIGRATIONS = `${packageDir(import.meta.url)}/store/migrations`;

describe('migration 075: existing accounts become teams of one owner', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  const approval = (device: string) => ({
    device_id: device,
    method: 'biometric',
    at: '2026-01-01T00:00:00.000Z',
    signed: false,
  });

  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.sql as never, { schema: 'actions', dir: migrationsBefore(MIGRATIONS, 75) });
    await db.sql`insert into actions.accounts (id) values ('acc_a'), ('acc_b'), ('acc_empty')`;
    await db.sql`
      insert into actions.devices (ref, id_hash, account_id, name, revoked_at) values
        ('dvc_a1', 'hash_a1', 'acc_a', 'phone', null),
        ('dvc_a2', 'hash_a2', 'acc_a', 'tablet', null),
        ('dvc_a3', 'hash_a3', 'acc_a', 'old', now()),
        ('dvc_b1', 'hash_b1', 'acc_b', null, null)`;
    await db.sql`insert into actions.totp (account_id, secret_enc, last_step) values ('acc_a', 'sealed', 42)`;
    const insert = (id: string, status: string, approvals: unknown[]) => db.sql`
      insert into actions.requests (id, account_id, agent_id, action_type, title, risk_level, risk_rank, reversible,
        currency, status, created_at, expires_at, quorum_required, quorum_approvals)
      values (${id}, 'acc_a', 'agt_a', 'purchase', 'stored', 'low', 0, true, 'USD', ${status}, now(),
        now() + interval '1 hour', 2, ${db.sql.json(approvals as never)})`;
    await insert('act_pending', 'pending', [approval('dvc_a1')]);
    await insert('act_done', 'approved', [approval('dvc_a1'), approval('dvc_a2')]);
    expect(await migrate(db.sql as never, { schema: 'actions', dir: MIGRATIONS })).toBeGreaterThan(0);
  });
  afterAll(async () => db?.drop());

  it('gives every account exactly one owner, who holds all its devices', async () => {
    const members = await db.sql<Array<{ id: string; account_id: string; role: string; name: string }>>`
      select id, account_id, role, name from actions.members order by account_id`;
    expect(members.map((m) => [m.account_id, m.role, m.name])).toEqual([
      ['acc_a', 'owner', 'Owner'],
      ['acc_b', 'owner', 'Owner'],
      ['acc_empty', 'owner', 'Owner'],
    ]);
    for (const m of members) expect(m.id).toMatch(/^mem_[0-9a-f]{20}$/);
    const devices = await db.sql<Array<{ ref: string; member_id: string; account_id: string }>>`
      select ref, member_id, account_id from actions.devices order by ref`;
    for (const d of devices) expect(d.member_id, d.ref).toBe(members.find((m) => m.account_id === d.account_id)!.id);
    const ownerA = members[0]!.id;
    expect((await createMemberStore(db.sql as never).list('acc_a')).map((m) => [m.id, m.devices])).toEqual([
      [ownerA, 2],
    ]);
  });

  it("lets the devices authenticate as their owner, a revoked one still not; the account's TOTP is the owner's", async () => {
    const identities = createIdentityStore(db.sql as never);
    const a1 = await identities.deviceByIdHash('hash_a1');
    expect(a1).toMatchObject({ ref: 'dvc_a1', account_id: 'acc_a', role: 'owner' });
    expect(await identities.deviceByIdHash('hash_a3')).toBeUndefined();
    const [totp] = await db.sql`select member_id, last_step from actions.totp where account_id = 'acc_a'`;
    expect(totp).toEqual({ member_id: a1!.member_id, last_step: '42' });
  });

  it('names the member of each approval of a pending quorum request, so the quorum counts people', async () => {
    const [pending] = await db.sql<Array<{ quorum_approvals: Array<Record<string, unknown>> }>>`
      select quorum_approvals from actions.requests where id = 'act_pending'`;
    const [owner] = await db.sql<Array<{ id: string }>>`select id from actions.members where account_id = 'acc_a'`;
    expect(pending!.quorum_approvals).toEqual([{ ...approval('dvc_a1'), member_id: owner!.id }]);
    const [done] = await db.sql<Array<{ quorum_approvals: unknown[] }>>`
      select quorum_approvals from actions.requests where id = 'act_done'`;
    expect(done!.quorum_approvals).toEqual([approval('dvc_a1'), approval('dvc_a2')]);
  });

  it('runs once: migrating again changes nothing', async () => {
    expect(await migrate(db.sql as never, { schema: 'actions', dir: MIGRATIONS })).toBe(0);
    expect((await db.sql`select count(*)::int as n from actions.members`)[0]!.n).toBe(3);
  });
});
