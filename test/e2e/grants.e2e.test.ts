import { randomBytes } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { Svcm } from '@nats-io/services';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';
import { itBesideTheService } from '../harness/sessions.js';

// Standing grants: made from an approval, they approve similar requests at creation.
const { natsUrl } = inject('infra');
const ROUNDS = Number(process.env.CONCURRENCY_ROUNDS ?? 1);
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', skip: false },
];

type Account = Awaited<ReturnType<ApiClient['newAccount']>>;
type Body = Record<string, any>;

/** How many decide requests each policy process of one stack has served, from the NATS micro stats. */
async function decideCounts(prefix: string): Promise<Map<string, number>> {
  const nc = await connect({ servers: natsUrl! });
  try {
    const counts = new Map<string, number>();
    for await (const s of await new Svcm(nc).client().stats('policy')) {
      const decide = s.endpoints?.find((e) => e.subject === `${prefix}.policy.v1.decide`);
      if (decide) counts.set(s.id, decide.num_requests);
    }
    return counts;
  } finally {
    await nc.close();
  }
}

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`standing grants end to end (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    const prefix = `tg${randomBytes(5).toString('hex')}`;

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode, databaseUrl: db.url, natsUrl, name: 'grants', env: { BUS_PREFIX: prefix } });
      api = apiClient(stack.baseUrl);
    });
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    const create = async (apiKey: string, body: Body) => {
      const r = await api.agent(apiKey).post('/actions', { action_type: 'purchase', title: 'buy', ...body });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body as Body;
    };
    /** Creates a pending request and approves it with `grant`; answers the grant as GET /grants lists it. */
    const grantFrom = async (acct: Account, request: Body, grant: Body) => {
      const pending = await create(acct.api_key, request);
      expect(pending.status).toBe('pending');
      const r = await api.device(acct.device_id).post(`/actions/${pending.id}/approve`, { grant });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ status: 'approved', resolved_by: 'biometric' });
      const grants = await list(acct);
      const made = grants.find((g) => g.created_from === pending.id);
      expect(made, JSON.stringify(grants)).toBeDefined();
      return made!;
    };
    const list = async (acct: Account) => {
      const r = await api.device(acct.device_id).get('/grants');
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.grants as Body[];
    };

    it('approve with a grant: similar requests are approved by it, others still wait; GET /grants shows its use', async () => {
      const acct = await api.newAccount();
      const before = Date.now();
      const grant = await grantFrom(
        acct,
        { amount: 5, recipient: 'coffee shop' },
        { duration_seconds: 3600, max_amount: 20, max_uses: 10 },
      );
      expect(grant).toMatchObject({
        grant_id: expect.stringMatching(/^grt_/),
        agent_id: acct.agent_id,
        action_type: 'purchase',
        recipient: 'coffee shop',
        currency: 'USD',
        max_amount: 20,
        spent: 0, // the approval that made the grant does not count against it
        max_uses: 10,
        uses: 0,
        revoked_at: null,
      });
      const expires = Date.parse(grant.expires_at) - before;
      expect(expires).toBeGreaterThan(3590_000);
      expect(expires).toBeLessThan(3700_000);

      const used = await create(acct.api_key, { amount: 7.5, recipient: 'coffee shop' });
      expect(used).toMatchObject({
        status: 'approved',
        resolved_by: `grant:${grant.grant_id}`,
        rule_applied: null,
      });
      expect(used.receipt).toEqual(expect.any(String));
      const claims = JSON.parse(Buffer.from(used.receipt.split('.')[1], 'base64url').toString());
      expect(claims).toMatchObject({ status: 'approved', resolved_by: `grant:${grant.grant_id}` });

      // Out of scope: another recipient, none, another type, another currency, another agent.
      expect((await create(acct.api_key, { amount: 1, recipient: 'bakery' })).status).toBe('pending');
      expect((await create(acct.api_key, { amount: 1 })).status).toBe('pending');
      expect(
        (await create(acct.api_key, { action_type: 'communication', title: 'mail', recipient: 'coffee shop' })).status,
      ).toBe('pending');
      expect((await create(acct.api_key, { amount: 1, recipient: 'coffee shop', currency: 'EUR' })).status).toBe(
        'pending',
      );
      const other = (await api.device(acct.device_id).post('/agents', { name: 'other' })).body as Body;
      expect((await create(other.api_key, { amount: 1, recipient: 'coffee shop' })).status).toBe('pending');

      expect((await list(acct)).find((g) => g.grant_id === grant.grant_id)).toMatchObject({ spent: 7.5, uses: 1 });

      // The use is in the request's audit trail, naming the grant; the creation in the approving request's.
      const trail = (await api.device(acct.device_id).get(`/actions/${used.id}/audit`)).body.events as Body[];
      expect(trail.find((e) => e.type === 'approved')).toMatchObject({
        actor: `grant:${grant.grant_id}`,
        data: expect.objectContaining({ grant_id: grant.grant_id }),
      });
      const origin = (await api.device(acct.device_id).get(`/actions/${grant.created_from}/audit`)).body
        .events as Body[];
      expect(origin.map((e) => e.type)).toEqual(expect.arrayContaining(['approved', 'grant_created']));
      expect(origin.find((e) => e.type === 'approved')!.data).toMatchObject({ grant_id: grant.grant_id });

      // Another account sees none of it, and cannot revoke it.
      const stranger = await api.newAccount();
      expect(await list(stranger)).toEqual([]);
      const denied = await api.device(stranger.device_id).delete(`/grants/${grant.grant_id}`);
      expect(denied.status).toBe(404);
      expect(denied.body.code).toBe('grant_not_found');
      expect((await api.device(acct.device_id).delete('/grants/grt_unknown')).status).toBe(404);
    });

    it('a grant without a recipient covers only requests without one', async () => {
      const acct = await api.newAccount();
      const grant = await grantFrom(acct, { amount: 1 }, { duration_seconds: 60 });
      expect(grant).toMatchObject({ recipient: null, max_amount: null, max_uses: null });
      expect(await create(acct.api_key, { amount: 1000 })).toMatchObject({ resolved_by: `grant:${grant.grant_id}` });
      expect((await create(acct.api_key, { amount: 1, recipient: 'anyone' })).status).toBe('pending');
    });

    it('budget and uses run out; a request past the remaining budget waits for a person', async () => {
      const acct = await api.newAccount();
      const byBudget = await grantFrom(acct, { amount: 1, recipient: 'a' }, { duration_seconds: 600, max_amount: 10 });
      expect((await create(acct.api_key, { amount: 6, recipient: 'a' })).resolved_by).toBe(
        `grant:${byBudget.grant_id}`,
      );
      expect((await create(acct.api_key, { amount: 5, recipient: 'a' })).status).toBe('pending'); // 6 + 5 > 10
      expect((await create(acct.api_key, { amount: 4, recipient: 'a' })).resolved_by).toBe(
        `grant:${byBudget.grant_id}`,
      );
      expect((await create(acct.api_key, { amount: 0.01, recipient: 'a' })).status).toBe('pending');

      const byUses = await grantFrom(acct, { amount: 1, recipient: 'b' }, { duration_seconds: 600, max_uses: 2 });
      for (let i = 0; i < 2; i++)
        expect((await create(acct.api_key, { amount: 1, recipient: 'b' })).resolved_by).toBe(
          `grant:${byUses.grant_id}`,
        );
      expect((await create(acct.api_key, { amount: 1, recipient: 'b' })).status).toBe('pending');
      // Requests without an amount use a use, and no budget.
      const noAmount = await grantFrom(
        acct,
        { action_type: 'communication', title: 'mail', recipient: 'c' },
        { duration_seconds: 600, max_uses: 1, max_amount: 1 },
      );
      const mail = await create(acct.api_key, { action_type: 'communication', title: 'mail 2', recipient: 'c' });
      expect(mail.resolved_by).toBe(`grant:${noAmount.grant_id}`);
      expect((await list(acct)).find((g) => g.grant_id === noAmount.grant_id)).toMatchObject({ uses: 1, spent: 0 });
      expect(
        (await create(acct.api_key, { action_type: 'communication', title: 'mail 3', recipient: 'c' })).status,
      ).toBe('pending');
    });

    itBesideTheService('expires: a grant past its duration approves nothing', async () => {
      const acct = await api.newAccount();
      const grant = await grantFrom(acct, { amount: 1, recipient: 'x' }, { duration_seconds: 60 });
      expect((await create(acct.api_key, { amount: 1, recipient: 'x' })).resolved_by).toBe(`grant:${grant.grant_id}`);
      // Sixty seconds are long for a test: the grant's expiry is moved into the past in the database.
      await db.sql`update policy.grants set expires_at = now() - interval '1 second' where id = ${grant.grant_id}`;
      expect((await create(acct.api_key, { amount: 1, recipient: 'x' })).status).toBe('pending');
    });

    it('revoking stops it at once, on every replica; revocation is audited', async () => {
      if (mode === 'processes' && stack.processes('policy').length < 2) await stack.addProcess('policy');
      const acct = await api.newAccount();
      const grant = await grantFrom(acct, { amount: 1, recipient: 'r' }, { duration_seconds: 3600 });
      // A burst reaches both replicas, so each has the grant in its copy of the account's policy.
      const burst = async () =>
        Promise.all(Array.from({ length: 10 }, () => create(acct.api_key, { amount: 1, recipient: 'r' })));
      expect((await burst()).map((b) => b.resolved_by)).toEqual(Array(10).fill(`grant:${grant.grant_id}`));
      const revoked = await api.device(acct.device_id).delete(`/grants/${grant.grant_id}`);
      expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
      expect(revoked.body).toMatchObject({ grant_id: grant.grant_id, revoked_at: expect.any(String), uses: 10 });
      expect((await burst()).map((b) => b.status)).toEqual(Array(10).fill('pending'));
      const origin = (await api.device(acct.device_id).get(`/actions/${grant.created_from}/audit`)).body
        .events as Body[];
      expect(origin.find((e) => e.type === 'grant_revoked')).toMatchObject({
        data: expect.objectContaining({ grant_id: grant.grant_id }),
      });
    });

    it('a matching rule still wins, and spending limits still apply to what a grant approves', async () => {
      const acct = await api.newAccount();
      const grant = await grantFrom(acct, { amount: 1, recipient: 'shop' }, { duration_seconds: 3600 });
      const device = api.device(acct.device_id);
      const deny = await device.post('/rules', {
        name: 'no big buys',
        decision: 'auto_deny',
        amount_max_cents: 100_000,
      });
      expect(deny.status).toBe(200);
      expect(await create(acct.api_key, { amount: 2, recipient: 'shop' })).toMatchObject({
        status: 'denied',
        resolved_by: 'rule:no big buys',
      });
      await device.delete(`/rules/${deny.body.rule_id}`);
      const daily = await device.post('/spending-limits', { period: 'daily', amount_limit: 10 });
      expect(daily.status).toBe(200);
      // Spend so far today: the $1 the person approved. The grant approves up to the limit, then the limit denies.
      expect((await create(acct.api_key, { amount: 8, recipient: 'shop' })).resolved_by).toBe(
        `grant:${grant.grant_id}`,
      );
      expect(await create(acct.api_key, { amount: 2, recipient: 'shop' })).toMatchObject({
        status: 'denied',
        resolved_by: `spending_limit:${daily.body.limit_id}`,
        spending_limit_exceeded: { limit: 10, spent: 9, requested: 2 },
      });
      expect((await create(acct.api_key, { amount: 1, recipient: 'shop' })).resolved_by).toBe(
        `grant:${grant.grant_id}`,
      );
      const summary = (await api.agent(acct.api_key).get('/agent/spending-summary')).body;
      expect(summary.summaries[0]).toMatchObject({ spent: 10, remaining: 0 });
    });

    it('refuses a bad grant with a 400 naming the field', async () => {
      const acct = await api.newAccount();
      const pending = await create(acct.api_key, { amount: 1 });
      for (const [grant, field] of [
        [{ duration_seconds: 59 }, 'grant.duration_seconds'],
        [{ duration_seconds: 2_592_001 }, 'grant.duration_seconds'],
        [{ duration_seconds: 60.5 }, 'grant.duration_seconds'],
        [{}, 'grant.duration_seconds'],
        [{ duration_seconds: 60, max_amount: -1 }, 'grant.max_amount'],
        [{ duration_seconds: 60, max_uses: 0 }, 'grant.max_uses'],
      ] as const) {
        const r = await api.device(acct.device_id).post(`/actions/${pending.id}/approve`, { grant });
        expect(r.status, JSON.stringify(grant)).toBe(400);
        expect(r.body.code).toBe('invalid_request');
        expect(r.body.detail).toContain(field);
      }
      expect(await list(acct)).toEqual([]);
      expect((await api.agent(acct.api_key).get(`/actions/${pending.id}`)).body.status).toBe('pending');
    });

    // CONCURRENCY_ROUNDS=20 repeats it on the same stack (a fresh account each round), to show it holds every time.
    for (let round = 1; round <= ROUNDS; round++)
      itBesideTheService(
        `never spends past a grant under concurrency: 40 simultaneous $10 purchases against a $100 grant give 10 approved${ROUNDS > 1 ? ` (round ${round})` : ''}`,
        async () => {
          if (mode === 'processes' && stack.processes('policy').length < 2) await stack.addProcess('policy');
          const before = mode === 'processes' ? await decideCounts(prefix) : new Map<string, number>();
          const acct = await api.newAccount();
          const grant = await grantFrom(
            acct,
            { amount: 1, recipient: 'store' },
            { duration_seconds: 3600, max_amount: 100 },
          );
          const results = await Promise.all(
            Array.from({ length: 40 }, (_, i) =>
              api
                .agent(acct.api_key)
                .post('/actions', { action_type: 'purchase', title: `burst ${i}`, amount: 10, recipient: 'store' }),
            ),
          );
          expect(results.map((r) => r.status)).toEqual(Array(40).fill(200));
          const approved = results.filter((r) => r.body.status === 'approved');
          expect(approved).toHaveLength(10);
          for (const r of approved) expect(r.body.resolved_by).toBe(`grant:${grant.grant_id}`);
          expect(results.filter((r) => r.body.status === 'pending')).toHaveLength(30);
          expect((await list(acct)).find((g) => g.grant_id === grant.grant_id)).toMatchObject({ spent: 100, uses: 10 });
          const [used] = await db.sql`
        select count(*)::int as n, coalesce(sum(amount_cents), 0)::int as cents from policy.grant_uses
        where grant_id = ${grant.grant_id}`;
          expect(used).toEqual({ n: 10, cents: 10_000 });
          if (mode === 'processes') {
            const after = await decideCounts(prefix);
            const decided = [...after].map(([id, n]) => n - (before.get(id) ?? 0));
            expect(decided).toHaveLength(2);
            // Both replicas took part (all 40 on one is a 2^-40 chance).
            expect(Math.min(...decided)).toBeGreaterThan(0);
          }
        },
      );
  });
}
