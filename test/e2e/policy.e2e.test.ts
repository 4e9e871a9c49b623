import { randomBytes } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { Svcm } from '@nats-io/services';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';
import { itBesideTheService } from '../harness/sessions.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', skip: false },
];

type Account = Awaited<ReturnType<ApiClient['newAccount']>>;

/** How many decide requests each policy process of one stack (one bus prefix) has served, by process, from the NATS micro stats. */
async function decideCountsPerProcess(prefix: string): Promise<Map<string, number>> {
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

/** How many decide requests each policy process served between two readings of decideCountsPerProcess. */
function decidedSince(before: Map<string, number>, after: Map<string, number>): number[] {
  return [...after].map(([id, n]) => n - (before.get(id) ?? 0));
}

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`rules and spending limits end to end (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    const prefix = `tp${randomBytes(5).toString('hex')}`;

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode, databaseUrl: db.url, natsUrl, name: 'policy', env: { BUS_PREFIX: prefix } });
      api = apiClient(stack.baseUrl);
    });
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    const rule = async (acct: Account, body: Record<string, unknown>) => {
      const r = await api.device(acct.device_id).post('/rules', body);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body as { rule_id: string; name: string };
    };
    const limit = async (acct: Account, body: Record<string, unknown>) => {
      const r = await api.device(acct.device_id).post('/spending-limits', body);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body as { limit_id: string };
    };
    const newAgent = async (acct: Account, name: string) =>
      (await api.device(acct.device_id).post('/agents', { name })).body as { agent_id: string; api_key: string };
    const buy = async (apiKey: string, amount: number, extra: Record<string, unknown> = {}) => {
      const r = await api
        .agent(apiKey)
        .post('/actions', { action_type: 'purchase', title: `buy for ${amount}`, amount, ...extra });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body;
    };
    const summary = async (apiKey: string) => (await api.agent(apiKey).get('/agent/spending-summary')).body;

    it('creates, lists in creation order and deletes rules; unknown ids are 404', async () => {
      const acct = await api.newAccount();
      const device = api.device(acct.device_id);
      const first = await rule(acct, {
        name: 'small purchases',
        decision: 'auto_approve',
        action_type: 'purchase',
        risk_level_max: 'medium',
        amount_max_cents: 2500,
      });
      expect(first).toMatchObject({
        name: 'small purchases',
        decision: 'auto_approve',
        action_type: 'purchase',
        agent_id: null,
        risk_level_max: 'medium',
        amount_max_cents: 2500,
      });
      expect(first.rule_id).toMatch(/^rul_[0-9A-Za-z]{20}$/);
      expect(first).toMatchObject({ id: first.rule_id });
      const second = await rule(acct, {
        name: '  no legal  ',
        decision: 'auto_deny',
        action_type: 'legal',
        agent_id: null,
        risk_level_max: null,
        amount_max_cents: null,
      });
      expect(second.name).toBe('no legal');

      const listed = await device.get('/rules');
      expect(listed.status).toBe(200);
      expect(listed.body.rules.map((r: { rule_id: string }) => r.rule_id)).toEqual([first.rule_id, second.rule_id]);

      expect(await device.delete(`/rules/${first.rule_id}`)).toMatchObject({
        status: 200,
        body: { deleted: true, id: first.rule_id },
      });
      expect(await device.delete(`/rules/${first.rule_id}`)).toMatchObject({
        status: 404,
        body: { detail: `Rule '${first.rule_id}' not found` },
      });
      expect((await device.delete('/rules/rul_doesnotexist')).status).toBe(404);
      expect((await device.get('/rules')).body.rules.map((r: { rule_id: string }) => r.rule_id)).toEqual([
        second.rule_id,
      ]);
    });

    it('creates, lists and deletes spending limits; unknown ids are 404', async () => {
      const acct = await api.newAccount();
      const device = api.device(acct.device_id);
      const daily = await limit(acct, { period: 'daily', amount_limit: 100 });
      expect(daily).toMatchObject({
        period: 'daily',
        amount_limit: 100,
        currency: 'USD',
        agent_id: null,
        action_type: null,
      });
      expect(daily.limit_id).toMatch(/^lim_[0-9A-Za-z]{20}$/);
      const weekly = await limit(acct, {
        period: 'weekly',
        amount_limit: 250.75,
        agent_id: acct.agent_id,
        action_type: 'purchase',
      });
      expect(weekly).toMatchObject({ amount_limit: 250.75, agent_id: acct.agent_id, action_type: 'purchase' });
      const listed = await device.get('/spending-limits');
      expect(listed.status).toBe(200);
      expect(listed.body.spending_limits.map((l: { limit_id: string }) => l.limit_id)).toEqual([
        daily.limit_id,
        weekly.limit_id,
      ]);
      expect(await device.delete(`/spending-limits/${daily.limit_id}`)).toMatchObject({
        status: 200,
        body: { deleted: true, id: daily.limit_id },
      });
      expect(await device.delete(`/spending-limits/${daily.limit_id}`)).toMatchObject({
        status: 404,
        body: { detail: `Spending limit '${daily.limit_id}' not found` },
      });
      expect((await device.get('/spending-limits')).body.spending_limits).toHaveLength(1);
    });

    it('rejects bad rule and limit bodies with 400 and a detail naming the field', async () => {
      const acct = await api.newAccount();
      const device = api.device(acct.device_id);
      const ruleCases: Array<[unknown, RegExp]> = [
        [{ decision: 'auto_approve' }, /^name: is required/],
        [{ name: '', decision: 'auto_approve' }, /^name: must not be empty/],
        [{ name: '   ', decision: 'auto_approve' }, /^name: must not be empty/],
        [{ name: 'x'.repeat(201), decision: 'auto_approve' }, /^name: .*200/],
        [{ name: 7, decision: 'auto_approve' }, /^name: /],
        [{ name: 'nul\u0000', decision: 'auto_approve' }, /^name: must not contain NUL/],
        [{ name: 'r' }, /^decision: is required/],
        [{ name: 'r', decision: 'approve' }, /^decision: invalid option/],
        [{ name: 'r', decision: 'auto_approve', action_type: 'teleport' }, /^action_type: /],
        [{ name: 'r', decision: 'auto_approve', risk_level_max: 'extreme' }, /^risk_level_max: /],
        [{ name: 'r', decision: 'auto_approve', amount_max_cents: -1 }, /^amount_max_cents: /],
        [{ name: 'r', decision: 'auto_approve', amount_max_cents: 10.5 }, /^amount_max_cents: must be a whole number/],
        [{ name: 'r', decision: 'auto_approve', amount_max_cents: '100' }, /^amount_max_cents: /],
        [{ name: 'r', decision: 'auto_approve', amount_max_cents: 1e12 }, /^amount_max_cents: /],
        [{ name: 'r', decision: 'auto_approve', agent_id: 'bob' }, /^agent_id: must be an agent id/],
        [{ name: 'r', decision: 'auto_approve', agent_id: 5 }, /^agent_id: /],
        [[], /^body: /],
      ];
      for (const [body, detail] of ruleCases) {
        const r = await device.post('/rules', body);
        expect(r.status, JSON.stringify(body)).toBe(400);
        expect(r.body.detail, JSON.stringify(body)).toMatch(detail);
      }
      const limitCases: Array<[unknown, RegExp]> = [
        [{ amount_limit: 10 }, /^period: is required/],
        [{ period: 'yearly', amount_limit: 10 }, /^period: invalid option/],
        [{ period: 'daily' }, /^amount_limit: is required/],
        [{ period: 'daily', amount_limit: 0 }, /^amount_limit: must be positive/],
        [{ period: 'daily', amount_limit: -5 }, /^amount_limit: must be positive/],
        [{ period: 'daily', amount_limit: '10' }, /^amount_limit: /],
        [{ period: 'daily', amount_limit: 0.001 }, /^amount_limit: must be at least 0.01/],
        [{ period: 'daily', amount_limit: 2e9 }, /^amount_limit: /],
        [{ period: 'daily', amount_limit: 10, action_type: 'shopping' }, /^action_type: /],
        [{ period: 'daily', amount_limit: 10, agent_id: 'aa_key' }, /^agent_id: /],
      ];
      for (const [body, detail] of limitCases) {
        const r = await device.post('/spending-limits', body);
        expect(r.status, JSON.stringify(body)).toBe(400);
        expect(r.body.detail, JSON.stringify(body)).toMatch(detail);
      }
      const malformed = await api.call('POST', '/rules', {
        raw: '{"name":',
        headers: { 'x-device-id': acct.device_id, 'content-type': 'application/json' },
      });
      expect(malformed.status).toBe(400);
      expect((await device.get('/rules')).body.rules).toEqual([]);
      expect((await device.get('/spending-limits')).body.spending_limits).toEqual([]);
    });

    it('isolates accounts: a device sees and deletes only its own rules and limits; roles are enforced', async () => {
      const owner = await api.newAccount();
      const stranger = await api.newAccount();
      const r = await rule(owner, { name: 'mine', decision: 'auto_approve' });
      const l = await limit(owner, { period: 'monthly', amount_limit: 50 });
      expect((await api.device(stranger.device_id).get('/rules')).body.rules).toEqual([]);
      expect((await api.device(stranger.device_id).get('/spending-limits')).body.spending_limits).toEqual([]);
      expect((await api.device(stranger.device_id).delete(`/rules/${r.rule_id}`)).status).toBe(404);
      expect((await api.device(stranger.device_id).delete(`/spending-limits/${l.limit_id}`)).status).toBe(404);
      expect((await api.device(owner.device_id).get('/rules')).body.rules).toHaveLength(1);
      // The owner's auto_approve rule and limit do not touch the stranger's requests.
      expect((await buy(stranger.api_key, 500)).status).toBe('pending');
      expect((await summary(stranger.api_key)).summaries).toEqual([]);

      expect((await api.call('GET', '/rules', { headers: { 'x-api-key': owner.api_key } })).status).toBe(401);
      expect(
        (
          await api.call('POST', '/spending-limits', {
            body: { period: 'daily', amount_limit: 1 },
            headers: { 'x-api-key': owner.api_key },
          })
        ).status,
      ).toBe(401);
      expect(
        (await api.call('GET', '/agent/spending-summary', { headers: { 'x-device-id': owner.device_id } })).status,
      ).toBe(401);
      expect((await api.call('GET', '/agent/spending-summary')).status).toBe(401);
    });

    it('resolves at creation by auto_approve and auto_deny rules, with rule_applied and resolved_by rule:{name}', async () => {
      const acct = await api.newAccount();
      await rule(acct, {
        name: 'cheap purchases',
        decision: 'auto_approve',
        action_type: 'purchase',
        amount_max_cents: 2000,
      });
      await rule(acct, { name: 'no contracts', decision: 'auto_deny', action_type: 'legal' });
      const agent = api.agent(acct.api_key);

      const approved = await buy(acct.api_key, 19.99);
      expect(approved).toMatchObject({
        status: 'approved',
        rule_applied: 'cheap purchases',
        resolved_by: 'rule:cheap purchases',
      });
      expect(Date.parse(approved.resolved_at)).toBeGreaterThan(0);
      expect((await agent.get(`/actions/${approved.id}`)).body).toMatchObject({
        status: 'approved',
        rule_applied: 'cheap purchases',
        resolved_by: 'rule:cheap purchases',
      });

      const denied = (await agent.post('/actions', { action_type: 'legal', title: 'Sign NDA' })).body;
      expect(denied).toMatchObject({
        status: 'denied',
        rule_applied: 'no contracts',
        resolved_by: 'rule:no contracts',
      });

      // Over the rule's cap, and no amount at all against a rule with a cap: no rule matches, a person decides.
      expect(await buy(acct.api_key, 20.01)).toMatchObject({
        status: 'pending',
        rule_applied: null,
        resolved_by: null,
      });
      expect((await agent.post('/actions', { action_type: 'purchase', title: 'no amount' })).body).toMatchObject({
        status: 'pending',
        rule_applied: null,
      });
      // A resolved request is not on the device's pending list, and cannot be approved again.
      const pendingIds = (await api.device(acct.device_id).get('/pending')).body.requests.map(
        (r: { id: string }) => r.id,
      );
      expect(pendingIds).not.toContain(approved.id);
      expect((await api.device(acct.device_id).post(`/actions/${denied.id}/approve`)).status).toBe(409);
    });

    it('evaluates rules in creation order: the first match wins', async () => {
      const acct = await api.newAccount();
      const low = await newAgent(acct, 'low-risk bot');
      const deny = await rule(acct, {
        name: 'deny risky',
        decision: 'auto_deny',
        risk_level_max: 'critical',
        agent_id: low.agent_id,
      });
      await rule(acct, { name: 'approve low risk', decision: 'auto_approve', risk_level_max: 'low' });
      await rule(acct, { name: 'deny everything', decision: 'auto_deny' });
      const send = (apiKey: string, risk: string) =>
        api.agent(apiKey).post('/actions', { action_type: 'communication', title: 'mail', risk_level: risk });

      expect((await send(low.api_key, 'low')).body).toMatchObject({ status: 'denied', rule_applied: 'deny risky' });
      expect((await send(acct.api_key, 'low')).body).toMatchObject({
        status: 'approved',
        rule_applied: 'approve low risk',
      });
      expect((await send(acct.api_key, 'medium')).body).toMatchObject({
        status: 'denied',
        rule_applied: 'deny everything',
      });
      await api.device(acct.device_id).delete(`/rules/${deny.rule_id}`);
      expect((await send(low.api_key, 'low')).body).toMatchObject({
        status: 'approved',
        rule_applied: 'approve low risk',
      });
    });

    itBesideTheService(
      "denies at creation past a limit with spending_limit_exceeded; reaching it exactly is allowed; people's approvals count",
      async () => {
        const acct = await api.newAccount();
        const daily = await limit(acct, { period: 'daily', amount_limit: 100 });
        const first = await buy(acct.api_key, 60);
        expect(first.status).toBe('pending'); // no rule: a person decides, and nothing is spent yet
        expect((await api.device(acct.device_id).post(`/actions/${first.id}/approve`)).body.status).toBe('approved');

        const over = await buy(acct.api_key, 50);
        expect(over).toMatchObject({
          status: 'denied',
          rule_applied: null,
          resolved_by: `spending_limit:${daily.limit_id}`,
          spending_limit_exceeded: { period: 'daily', limit: 100, spent: 60, requested: 50 },
        });
        expect((await api.agent(acct.api_key).get(`/actions/${over.id}`)).body.spending_limit_exceeded).toEqual({
          period: 'daily',
          limit: 100,
          spent: 60,
          requested: 50,
        });
        // The audit record keeps the figures the denial was based on.
        const trail =
          await db.sql`select event, actor, detail from actions.audit_events where request_id = ${over.id} order by id`;
        expect(trail.map((e) => [e.event, e.actor])).toEqual([
          ['created', `agent:${acct.agent_id}`],
          ['denied', `spending_limit:${daily.limit_id}`],
        ]);
        expect(trail[1]!.detail).toEqual({
          rule_applied: null,
          spending_limit_exceeded: { period: 'daily', limit: 100, spent: 60, requested: 50 },
          receipt: over.receipt,
        });
        const exact = await buy(acct.api_key, 40);
        expect(exact.status).toBe('pending');
        expect(exact.spending_limit_exceeded).toBeUndefined();
        // Requests without an amount are not subject to limits.
        expect(
          (await api.agent(acct.api_key).post('/actions', { action_type: 'purchase', title: 'free sample' })).body
            .status,
        ).toBe('pending');

        expect((await summary(acct.api_key)).summaries).toEqual([
          expect.objectContaining({
            limit_id: daily.limit_id,
            period: 'daily',
            limit: 100,
            spent: 60,
            remaining: 40,
            utilization: 0.6,
          }),
        ]);
      },
    );

    it('lets spending limits override auto_approve rules, and never auto-approves another currency under a limit', async () => {
      const acct = await api.newAccount();
      await rule(acct, { name: 'approve purchases', decision: 'auto_approve', action_type: 'purchase' });
      const cap = await limit(acct, { period: 'weekly', amount_limit: 25 });
      expect(await buy(acct.api_key, 20)).toMatchObject({ status: 'approved', rule_applied: 'approve purchases' });
      expect(await buy(acct.api_key, 10)).toMatchObject({
        status: 'denied',
        rule_applied: null,
        resolved_by: `spending_limit:${cap.limit_id}`,
        spending_limit_exceeded: { period: 'weekly', limit: 25, spent: 20, requested: 10 },
      });
      expect(await buy(acct.api_key, 5)).toMatchObject({ status: 'approved', rule_applied: 'approve purchases' });
      expect(await buy(acct.api_key, 0.01)).toMatchObject({
        status: 'denied',
        resolved_by: `spending_limit:${cap.limit_id}`,
      });
      // No exchange rate: an amount in euros cannot be checked against a USD limit, so a person decides.
      expect(await buy(acct.api_key, 1, { currency: 'eur' })).toMatchObject({
        status: 'pending',
        rule_applied: null,
        currency: 'EUR',
      });
      // Actions without an amount still follow the rule.
      expect(
        (await api.agent(acct.api_key).post('/actions', { action_type: 'purchase', title: 'no amount' })).body.status,
      ).toBe('approved');
      expect((await summary(acct.api_key)).summaries[0]).toMatchObject({
        limit: 25,
        spent: 25,
        remaining: 0,
        utilization: 1,
      });
    });

    it('scopes limits by agent and action type', async () => {
      const acct = await api.newAccount();
      const other = await newAgent(acct, 'other bot');
      await rule(acct, { name: 'approve all', decision: 'auto_approve' });
      const mine = await limit(acct, { period: 'daily', amount_limit: 10, agent_id: acct.agent_id });
      const purchases = await limit(acct, { period: 'monthly', amount_limit: 30, action_type: 'purchase' });

      expect(await buy(acct.api_key, 10)).toMatchObject({ status: 'approved' });
      expect(await buy(acct.api_key, 1)).toMatchObject({
        status: 'denied',
        resolved_by: `spending_limit:${mine.limit_id}`,
      });
      // The other agent is only under the purchase limit, which the first agent's $10 counts towards.
      expect(await buy(other.api_key, 20)).toMatchObject({ status: 'approved' });
      expect(await buy(other.api_key, 1)).toMatchObject({
        status: 'denied',
        resolved_by: `spending_limit:${purchases.limit_id}`,
        spending_limit_exceeded: { spent: 30 },
      });
      // A different action type with an amount is under no limit of the other agent.
      expect(
        (
          await api
            .agent(other.api_key)
            .post('/actions', { action_type: 'scheduling', title: 'book a table', amount: 500 })
        ).body.status,
      ).toBe('approved');

      const mineSummary = await summary(acct.api_key);
      expect(mineSummary.agent_id).toBe(acct.agent_id);
      expect(mineSummary.summaries.map((s: { limit_id: string }) => s.limit_id)).toEqual([
        mine.limit_id,
        purchases.limit_id,
      ]);
      expect(mineSummary.summaries[0]).toMatchObject({
        limit_id: mine.limit_id,
        period: 'daily',
        limit: 10,
        spent: 10,
        remaining: 0,
        utilization: 1,
      });
      expect(mineSummary.summaries[1]).toMatchObject({
        limit_id: purchases.limit_id,
        period: 'monthly',
        limit: 30,
        spent: 30,
        remaining: 0,
        utilization: 1,
      });
      const otherSummary = await summary(other.api_key);
      expect(otherSummary).toMatchObject({
        agent_id: other.agent_id,
        summaries: [expect.objectContaining({ limit_id: purchases.limit_id, spent: 30 })],
      });
      for (const entry of otherSummary.summaries) {
        expect(Object.keys(entry)).toEqual(
          expect.arrayContaining(['limit_id', 'period', 'limit', 'spent', 'remaining', 'utilization']),
        );
      }
    });

    itBesideTheService(
      "counts a person's approval once however many approvals race, releases it when a deny wins, and lets a person approve past a limit",
      async () => {
        const acct = await api.newAccount();
        await limit(acct, { period: 'daily', amount_limit: 10 });
        const second = (await api.device(acct.device_id).post('/devices', { device_name: 'tablet' })).body
          .device_id as string;

        const raced = await buy(acct.api_key, 5);
        const attempts = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            api.device(i % 2 ? second : acct.device_id).post(`/actions/${raced.id}/approve`),
          ),
        );
        expect(attempts.filter((r) => r.status === 200)).toHaveLength(1);
        expect((await summary(acct.api_key)).summaries[0]).toMatchObject({ spent: 5 });

        const contested = await buy(acct.api_key, 4);
        const outcome = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            api.device(i % 2 ? second : acct.device_id).post(`/actions/${contested.id}/${i % 2 ? 'deny' : 'approve'}`),
          ),
        );
        const winner = outcome.find((r) => r.status === 200)!.body.status as string;
        await expect
          .poll(async () => (await summary(acct.api_key)).summaries[0].spent)
          .toBe(winner === 'approved' ? 9 : 5);
        const [rows] = await db.sql`select count(*)::int as n from policy.spend where action_id = ${contested.id}`;
        expect(rows!.n).toBe(winner === 'approved' ? 1 : 0);
        // The limit's running total agrees with the ledger after the race and the release.
        const [usage] =
          await db.sql`select sum(u.spent_cents)::int as cents from policy.limit_usage u join policy.spending_limits l on l.id = u.limit_id where l.account_id = ${acct.account_id}`;
        expect(usage!.cents).toBe(winner === 'approved' ? 900 : 500);

        // Each of these is within the limit on its own at creation; the person approves both, and both count.
        const spentBefore = (await summary(acct.api_key)).summaries[0].spent as number;
        const a = await buy(acct.api_key, 10 - spentBefore);
        const b = await buy(acct.api_key, 10 - spentBefore);
        expect([a.status, b.status]).toEqual(['pending', 'pending']);
        expect((await api.device(acct.device_id).post(`/actions/${a.id}/approve`)).status).toBe(200);
        expect((await api.device(acct.device_id).post(`/actions/${b.id}/approve`)).status).toBe(200);
        expect((await summary(acct.api_key)).summaries[0]).toMatchObject({
          limit: 10,
          spent: 10 + (10 - spentBefore),
          remaining: 0,
        });
        expect((await summary(acct.api_key)).summaries[0].utilization).toBeGreaterThan(1);
        expect(await buy(acct.api_key, 0.01)).toMatchObject({ status: 'denied' });
      },
    );

    itBesideTheService('counts spend approved before a limit existed, and only what each limit covers', async () => {
      const acct = await api.newAccount();
      const other = await newAgent(acct, 'other bot');
      await rule(acct, { name: 'approve purchases', decision: 'auto_approve', action_type: 'purchase' });
      expect(await buy(acct.api_key, 30)).toMatchObject({ status: 'approved' });
      expect(await buy(other.api_key, 20)).toMatchObject({ status: 'approved' });
      // Created after $50 was spent today: the account-wide limit sees all of it, the agent-scoped one only its agent's.
      const all = await limit(acct, { period: 'daily', amount_limit: 60 });
      const mine = await limit(acct, { period: 'daily', amount_limit: 40, agent_id: acct.agent_id });
      // Each limit's running total is opened from the ledger as it is created.
      const opened =
        await db.sql`select limit_id, spent_cents::int as cents from policy.limit_usage where limit_id in (${all.limit_id}, ${mine.limit_id}) order by spent_cents`;
      expect(opened.map((r) => [r.limit_id, r.cents])).toEqual([
        [mine.limit_id, 3000],
        [all.limit_id, 5000],
      ]);
      expect(await buy(other.api_key, 15)).toMatchObject({
        status: 'denied',
        resolved_by: `spending_limit:${all.limit_id}`,
        spending_limit_exceeded: { spent: 50, requested: 15 },
      });
      expect(await buy(acct.api_key, 10)).toMatchObject({ status: 'approved' });
      expect(await buy(acct.api_key, 0.01)).toMatchObject({
        status: 'denied',
        resolved_by: `spending_limit:${all.limit_id}`,
      });
      expect(await buy(other.api_key, 10)).toMatchObject({
        status: 'denied',
        spending_limit_exceeded: { limit: 60, spent: 60 },
      });
      expect((await summary(acct.api_key)).summaries).toEqual([
        expect.objectContaining({ limit_id: all.limit_id, spent: 60, remaining: 0 }),
        expect.objectContaining({ limit_id: mine.limit_id, spent: 40, remaining: 0 }),
      ]);
    });

    it('every replica decides by the rules and limits in force right after each change (each caches them)', async () => {
      if (mode === 'processes' && stack.processes('policy').length < 2) await stack.addProcess('policy');
      const acct = await api.newAccount();
      const before = mode === 'processes' ? await decideCountsPerProcess(prefix) : new Map<string, number>();
      // Ten at once reach both replicas (the queue group spreads them), so each caches the account's policy.
      const burst = async (amount: number | null) =>
        (
          await Promise.all(
            Array.from({ length: 10 }, () =>
              api.agent(acct.api_key).post('/actions', { action_type: 'purchase', title: 'burst', amount }),
            ),
          )
        ).map((r) => r.body.status);
      expect(await burst(5)).toEqual(Array(10).fill('pending'));
      const approve = await rule(acct, {
        name: 'approve purchases',
        decision: 'auto_approve',
        action_type: 'purchase',
      });
      expect(await burst(5)).toEqual(Array(10).fill('approved'));
      // A limit the cached copies do not know yet: the database enforces it, and every replica knows it at once.
      await limit(acct, { period: 'daily', amount_limit: 60 });
      expect((await burst(5)).sort()).toEqual([...Array(2).fill('approved'), ...Array(8).fill('denied')]);
      expect(await burst(null)).toEqual(Array(10).fill('approved')); // no amount: no limit applies, the rule does
      await api.device(acct.device_id).delete(`/rules/${approve.rule_id}`);
      expect(await burst(null)).toEqual(Array(10).fill('pending'));
      if (mode === 'processes') {
        const decided = decidedSince(before, await decideCountsPerProcess(prefix));
        expect(decided).toHaveLength(2);
        // Both replicas took part (all 40 on one is a 2^-40 chance).
        expect(Math.min(...decided)).toBeGreaterThan(0);
      }
    });

    it('every replica denies by the spend a person approved a moment ago, whichever replica counted it (each keeps the totals it read)', async () => {
      if (mode === 'processes' && stack.processes('policy').length < 2) await stack.addProcess('policy');
      const acct = await api.newAccount();
      const daily = await limit(acct, { period: 'daily', amount_limit: 100 });
      // Ten at once reach both replicas (the queue group spreads them): each reads the day's total and keeps it.
      const burst = async (amount: number) => Promise.all(Array.from({ length: 10 }, () => buy(acct.api_key, amount)));
      const first = await burst(10);
      expect(first.map((r) => r.status)).toEqual(Array(10).fill('pending'));
      // Nine approvals, each counted by whichever replica takes it: $90 of the day's $100.
      for (const req of first.slice(0, 9)) {
        const approved = await api.device(acct.device_id).post(`/actions/${req.id}/approve`);
        expect(approved.body.status).toBe('approved');
      }
      const over = await burst(20);
      expect(over.map((r) => r.status)).toEqual(Array(10).fill('denied'));
      expect(over[0]).toMatchObject({
        resolved_by: `spending_limit:${daily.limit_id}`,
        spending_limit_exceeded: { period: 'daily', limit: 100, spent: 90, requested: 20 },
      });
      expect((await burst(10)).map((r) => r.status)).toEqual(Array(10).fill('pending')); // exactly the limit: allowed
      // A deny that releases nothing changes nothing; the tenth request's approval takes the day to its limit.
      expect((await api.device(acct.device_id).post(`/actions/${first[9]!.id}/approve`)).body.status).toBe('approved');
      expect((await burst(1)).map((r) => r.status)).toEqual(Array(10).fill('denied'));
    });

    itBesideTheService(
      'never spends past a limit under concurrency: 40 simultaneous $10 purchases against $100 a day give 10 approved, 30 denied',
      async () => {
        if (mode === 'processes' && stack.processes('policy').length < 2) await stack.addProcess('policy');
        const before = mode === 'processes' ? await decideCountsPerProcess(prefix) : new Map<string, number>();
        const acct = await api.newAccount();
        await rule(acct, { name: 'approve purchases', decision: 'auto_approve', action_type: 'purchase' });
        const daily = await limit(acct, { period: 'daily', amount_limit: 100 });
        const keys = [
          acct.api_key,
          ...(await Promise.all([1, 2, 3].map(async (i) => (await newAgent(acct, `bot ${i}`)).api_key))),
        ];
        // Warm the gateway's auth cache so that the burst below reaches the policy service together.
        await Promise.all(keys.map((k) => api.agent(k).get('/actions')));

        const results = await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            api
              .agent(keys[i % keys.length]!)
              .post('/actions', { action_type: 'purchase', title: `burst ${i}`, amount: 10 }),
          ),
        );
        expect(results.map((r) => r.status)).toEqual(Array(40).fill(200));
        const approved = results.filter((r) => r.body.status === 'approved');
        const denied = results.filter((r) => r.body.status === 'denied');
        expect(approved).toHaveLength(10);
        expect(denied).toHaveLength(30);
        for (const r of approved)
          expect(r.body).toMatchObject({ rule_applied: 'approve purchases', resolved_by: 'rule:approve purchases' });
        // Denials come only once the full $100 is spent.
        for (const r of denied) {
          expect(r.body).toMatchObject({
            resolved_by: `spending_limit:${daily.limit_id}`,
            spending_limit_exceeded: { period: 'daily', limit: 100, spent: 100, requested: 10 },
          });
        }
        const [spend] =
          await db.sql`select count(*)::int as n, sum(amount_cents)::int as cents from policy.spend where account_id = ${acct.account_id}`;
        expect(spend).toEqual({ n: 10, cents: 10_000 });
        const [usage] =
          await db.sql`select spent_cents::int as cents from policy.limit_usage where limit_id = ${daily.limit_id}`;
        expect(usage!.cents).toBe(10_000);
        expect((await summary(acct.api_key)).summaries[0]).toMatchObject({
          limit: 100,
          spent: 100,
          remaining: 0,
          utilization: 1,
        });
        // Both policy replicas took part (the queue group spreads the burst; all 40 on one is a 2^-40 chance).
        if (mode === 'processes') {
          const decided = decidedSince(before, await decideCountsPerProcess(prefix));
          expect(decided).toHaveLength(2);
          expect(Math.min(...decided)).toBeGreaterThan(0);
        }
      },
    );
  });
}
