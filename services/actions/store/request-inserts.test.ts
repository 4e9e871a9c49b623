import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, packageDir } from '@agent-auth/db';
import { createTestDatabase } from '../../../test/infra/database.js';
import { insertGatheredCreates, type RequestInsert } from './request-inserts.js';
import type { NewRequest } from '../domain/rows.js';
import { createRequestStore } from './requests.js';
import { createOutboxStore } from './outbox.js';
import { ActionEvent, timePrefix } from '@agent-auth/contracts';

function newRequest(id: string, accountId: string): NewRequest {
  return {
    id,
    account_id: accountId,
    agent_id: `agt_${accountId}`,
    action_type: 'purchase',
    title: `buy ${id}`,
    description: null,
    risk_level: 'medium',
    risk_rank: 1,
    reversible: true,
    amount_cents: '999',
    currency: 'USD',
    recipient: null,
    metadata_enc: null,
    callback_url: null,
    content_hash: 'c'.repeat(64),
    status: 'pending',
    rule_applied: null,
    resolved_by: null,
    reason: null,
    spending_limit_exceeded: null,
    request_hash: null,
    policy_version: null,
    receipt: null,
    quorum_required: null,
    expires_in_seconds: 600,
    resolved: false,
    at: new Date('2026-11-24T01:02:03.456Z'),
  };
}

const created = (id: string) => [{ event: 'created', actor: 'agent:bot', detail: { request: id } }];
const inserts = (accountId: string, ids: string[], freeQuota: number): RequestInsert[] =>
  ids.map((id) => ({ row: newRequest(id, accountId), audit: created(id), freeQuota }));

describe('storing creates several to a statement (real Postgres)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  const sql = () => db.sql as never;
  const account = async (id: string, plan: 'free' | 'unlimited', counted = 0) => {
    await db.sql`insert into actions.accounts (id, plan) values (${id}, ${plan})`;
    await db.sql`insert into actions.agents (id, account_id, name, key_id, key_hash, webhook_secret_enc)
      values (${`agt_${id}`}, ${id}, 'bot', ${`k_${id}`}, 'h', 'w')`;
    if (counted) {
      await db.sql`insert into actions.monthly_usage (account_id, month, shard, actions)
        values (${id}, date_trunc('month', now() at time zone 'utc')::date, 0, ${counted})`;
    }
  };
  const usage = async (id: string) =>
    (await db.sql`select coalesce(sum(actions), 0)::int as n from actions.monthly_usage where account_id = ${id}`)[0]!
      .n;
  const trail = async (id: string) =>
    (
      await db.sql`select event, detail->>'request' as request from actions.audit_events where account_id = ${id} order by id`
    ).map((r) => `${r.event} ${r.request}`);
  const outbox = async (id: string) =>
    (await db.sql`select request_id from actions.outbox where account_id = ${id} order by seq`).map(
      (r) => r.request_id,
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.sql as never, { schema: 'actions', dir: `${packageDir(import.meta.url)}/store/migrations` });
  });
  afterAll(async () => db?.drop());

  it('lets in only what is left of a free quota, first come first stored, each with its audit entry and event', async () => {
    await account('acc_free', 'free', 2);
    const ids = ['act_f1', 'act_f2', 'act_f3', 'act_f4', 'act_f5', 'act_f6'];
    const stored = await insertGatheredCreates(sql(), inserts('acc_free', ids, 5));
    expect(stored.map((r) => r?.row.id)).toEqual(['act_f1', 'act_f2', 'act_f3', undefined, undefined, undefined]);
    expect(stored[0]!.row).toMatchObject({
      status: 'pending',
      amount_cents: '999',
      created_at: new Date('2026-11-24T01:02:03.456Z'),
      expires_at: new Date('2026-11-24T01:12:03.456Z'),
      resolved_at: null,
      quorum_approvals: [],
      user_verified: false,
    });
    expect(stored[2]!.event).toMatchObject({ type: 'action.created', action: { id: 'act_f3', status: 'pending' } });
    expect(await usage('acc_free')).toBe(5);
    expect(await trail('acc_free')).toEqual(['created act_f1', 'created act_f2', 'created act_f3']);
    expect(await outbox('acc_free')).toEqual(['act_f1', 'act_f2', 'act_f3']);
    // Used up: a statement of one more stores nothing and counts nothing.
    expect(await insertGatheredCreates(sql(), inserts('acc_free', ['act_f7'], 5))).toEqual([undefined]);
    expect(await usage('acc_free')).toBe(5);
  });

  it('counts each account of a statement on its own plan', async () => {
    await account('acc_a', 'free');
    await account('acc_b', 'unlimited');
    const mixed = [
      ...inserts('acc_a', ['act_a1'], 2),
      ...inserts('acc_b', ['act_b1', 'act_b2'], 2),
      ...inserts('acc_a', ['act_a2', 'act_a3'], 2),
      ...inserts('acc_b', ['act_b3'], 2),
    ];
    const stored = await insertGatheredCreates(sql(), mixed);
    expect(stored.map((r) => r?.row.id)).toEqual(['act_a1', 'act_b1', 'act_b2', 'act_a2', undefined, 'act_b3']);
    expect([await usage('acc_a'), await usage('acc_b')]).toEqual([2, 3]);
    expect(await trail('acc_b')).toEqual(['created act_b1', 'created act_b2', 'created act_b3']);
  });

  it('stores and counts the rest of a gathered statement when one of its ids is stored already', async () => {
    await account('acc_d', 'free');
    const store = createRequestStore(sql(), () => {}, { inFlight: 1, maxBatch: 10 });
    const [first] = inserts('acc_d', ['act_d0'], 10);
    await store.insertWithinQuota({ ...first!, freeQuota: 10 });
    // The first goes out alone; the other four wait for it and go out together, with act_d0 again among them.
    const results = await Promise.allSettled(
      inserts('acc_d', ['act_d1', 'act_d2', 'act_d0', 'act_d3', 'act_d4'], 10).map((i) => store.insertWithinQuota(i)),
    );
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value?.id : (r.reason as { code: string }).code))).toEqual([
      'act_d1',
      'act_d2',
      '23505',
      'act_d3',
      'act_d4',
    ]);
    expect(await usage('acc_d')).toBe(5);
    expect(await trail('acc_d')).toEqual([
      'created act_d0',
      'created act_d1',
      'created act_d2',
      'created act_d3',
      'created act_d4',
    ]);
  });

  it('answers each stored row and event as Postgres stored them, without reading them back', async () => {
    await account('acc_e', 'unlimited');
    const pending = newRequest('act_e1', 'acc_e');
    const approved: NewRequest = {
      ...newRequest('act_e2', 'acc_e'),
      status: 'approved',
      resolved: true,
      rule_applied: 'rul_auto',
      resolved_by: 'rule:rul_auto',
      receipt: 'eyJhbGciOiJFUzI1NiJ9.e30.sig',
      request_hash: 'e'.repeat(64),
      policy_version: 'v7',
      metadata_enc: 'v1:k1:sealed',
      callback_url: 'https://hooks.example.com/agent',
      spending_limit_exceeded: { period: 'daily', limit: 100, spent: 90, requested: 20 },
      at: new Date('2026-11-24T01:02:03.400Z'),
    };
    const quorum: NewRequest = { ...newRequest('act_e3', 'acc_e'), amount_cents: null, quorum_required: 2 };
    const stored = await insertGatheredCreates(
      sql(),
      [pending, approved, quorum].map((row) => ({ row, audit: created(row.id), freeQuota: 10 })),
    );
    for (const s of stored) {
      const [row] = await db.sql`select * from actions.requests where id = ${s!.row.id}`;
      expect(s!.row).toEqual(row);
    }
    // The events the writer publishes are those a relay taking its rows over would publish, even once the pending
    // requests were decided meanwhile (the rows keep no snapshot: the relay makes each event of the request as created).
    await db.sql`update actions.requests set status = 'approved', resolved_by = 'biometric', resolved_at = now(),
      receipt = 'later', user_verified = true, passkey_id = 'pk_1' where id = 'act_e1'`;
    await db.sql`update actions.requests set quorum_approvals = '[{"device_id":"dev_1","method":"biometric","at":"2026-11-24T01:02:04.000Z","signed":false}]'
      where id = 'act_e3'`;
    expect(
      (await db.sql`select count(*)::int as n from actions.outbox where action is null and account_id = 'acc_e'`)[0]!.n,
    ).toBe(3);
    await db.sql`update actions.outbox set claimed_until = null where account_id = 'acc_e'`;
    const relayed = await createOutboxStore(db.sql as never).claim(10, 30);
    expect(relayed.map((e) => ActionEvent.parse(e))).toEqual(stored.map((s) => ActionEvent.parse(s!.event)));
    expect(stored.map((s) => [s!.event.type, s!.event.occurred_at])).toEqual([
      ['action.created', '2026-11-24T01:02:03.456Z'],
      ['action.resolved', '2026-11-24T01:02:03.400Z'],
      ['action.created', '2026-11-24T01:02:03.456Z'],
    ]);
    expect(stored[1]!.event).toMatchObject({ outcome: { user_verified: false, reason: null, quorum: null } });
  });

  it('names the events the database writes as the writer names its own: msg_, then their time', async () => {
    for (const ms of [0, 1_296, 1_795_000_000_123, 36 ** 9 - 1]) {
      expect((await db.sql`select actions.time_prefix(${ms}) as p`)[0]!.p).toBe(timePrefix(ms));
    }
    await account('acc_m', 'unlimited');
    await insertGatheredCreates(sql(), inserts('acc_m', ['act_m1'], 10));
    await db.sql`update actions.requests set status = 'denied', resolved_at = now() where id = 'act_m1'`;
    const before = Date.now();
    await db.sql`insert into actions.outbox (type, account_id, agent_id, request_id) values
      ('action.resolved', 'acc_m', 'agt_acc_m', 'act_m1')`;
    const ids = (await db.sql`select id from actions.outbox where account_id = 'acc_m' order by seq`).map((r) => r.id);
    expect(ids).toHaveLength(2);
    for (const id of ids) expect(id).toMatch(/^msg_[0-9a-z]{9}[0-9A-Za-z]{11,16}$/);
    const made = Number.parseInt(ids[1].slice(4, 13), 36);
    expect(made).toBeGreaterThanOrEqual(before - 1_000);
    expect(made).toBeLessThanOrEqual(Date.now() + 1_000);
    expect(ids[0].slice(4, 13) <= ids[1].slice(4, 13)).toBe(true);
  });
});
