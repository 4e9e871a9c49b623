import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { actionsEndpoints as ep } from '@agent-auth/contracts';
import { apiClient, type ApiClient } from '../harness/http.js';
import { inviteAndJoin } from '../harness/members.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';
import { selfSignedCert, startUpstream, trustFile, type Upstream } from '../harness/upstream.js';

// Quorum rules: a matched request waits for `quorum` distinct members (people, not devices); any deny denies.
const { natsUrl } = inject('infra');
const ROUNDS = Number(process.env.CONCURRENCY_ROUNDS ?? 1);
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', skip: false },
];

type Body = Record<string, any>;

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`quorum rules end to end (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let receiver: Upstream;

    beforeAll(async () => {
      db = await createTestDatabase();
      const cert = selfSignedCert();
      receiver = await startUpstream({ tls: cert, handler: (_req, res) => void res.writeHead(204).end() });
      stack = await startStack({
        mode,
        databaseUrl: db.url,
        natsUrl,
        name: 'quorum',
        env: { NODE_EXTRA_CA_CERTS: trustFile(cert) },
      });
      api = apiClient(stack.baseUrl);
    });
    afterAll(async () => {
      await stack?.stop();
      await receiver?.close();
      await db?.drop();
    });

    const webhooksOf = (requestId: string) =>
      receiver.seen.filter((r) => r.body.includes(`"id":"${requestId}"`)).map((r) => JSON.parse(r.body) as Body);

    /** An account with three members (the owner and two approvers) and a rule asking `quorum` of them for purchases. */
    const quorumAccount = async (quorum: number) => {
      const acct = await api.newAccount();
      const first = api.device(acct.device_id);
      const others = await Promise.all(
        ['Dana', 'Lee'].map(
          async (name) => (await inviteAndJoin(api, acct.device_id, { name, role: 'approver' })).device_id,
        ),
      );
      const rule = await first.post('/rules', {
        name: 'two of us',
        decision: 'require_quorum',
        quorum,
        action_type: 'purchase',
      });
      expect(rule.status, JSON.stringify(rule.body)).toBe(200);
      expect(rule.body).toMatchObject({ decision: 'require_quorum', quorum });
      const devices = [acct.device_id, ...others].map((id) => api.device(id));
      const create = async (extra: Body = {}) => {
        const r = await api.agent(acct.api_key).post('/actions', {
          action_type: 'purchase',
          title: 'Buy a car',
          amount: 900,
          callback_url: `${receiver.origin}/hook`,
          ...extra,
        });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        return r.body as Body;
      };
      return { acct, devices, create };
    };

    it('refuses a quorum rule without a quorum of 2 to 10 (400 naming quorum)', async () => {
      const acct = await api.newAccount();
      for (const body of [
        { decision: 'require_quorum' },
        { decision: 'require_quorum', quorum: 1 },
        { decision: 'require_quorum', quorum: 11 },
        { decision: 'require_quorum', quorum: 2.5 },
        { decision: 'auto_approve', quorum: 2 },
      ]) {
        const r = await api.device(acct.device_id).post('/rules', { name: 'q', ...body });
        expect(r.status, JSON.stringify(body)).toBe(400);
        expect(r.body.code).toBe('invalid_request');
        expect(r.body.detail).toMatch(/^quorum: /);
      }
      expect((await api.device(acct.device_id).get('/rules')).body.rules).toEqual([]);
    });

    it('2 of 3: stays pending after one approval, approved by the second device; webhook only on the outcome', async () => {
      const { devices, create } = await quorumAccount(2);
      const [a, b, c] = devices as [
        ReturnType<ApiClient['device']>,
        ReturnType<ApiClient['device']>,
        ReturnType<ApiClient['device']>,
      ];
      const req = await create();
      expect(req).toMatchObject({
        status: 'pending',
        rule_applied: 'two of us',
        resolved_by: null,
        quorum: { required: 2, approvals: [] },
      });
      const listed = (await a.get('/pending')).body.requests.find((r: Body) => r.id === req.id);
      expect(listed.quorum).toEqual({ required: 2, approvals: [] });

      const first = await a.post(`/actions/${req.id}/approve`, { totp_code: null });
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.body).toMatchObject({ status: 'pending', resolved_by: null, receipt: null });
      expect(first.body.quorum.required).toBe(2);
      expect(first.body.quorum.approvals).toEqual([
        {
          device_id: expect.any(String),
          member_id: expect.stringMatching(/^mem_/),
          method: 'biometric',
          at: expect.any(String),
          signed: false,
        },
      ]);
      const twice = await a.post(`/actions/${req.id}/approve`);
      expect(twice.status).toBe(409);
      expect(twice.body.code).toBe('quorum_already_approved');
      const progress = (await b.get('/pending')).body.requests.find((r: Body) => r.id === req.id);
      expect(progress.quorum.approvals).toHaveLength(1);
      // Nothing announced for a partial approval.
      await sleep(1000);
      expect(webhooksOf(req.id)).toEqual([]);

      const second = await b.post(`/actions/${req.id}/approve`);
      expect(second.status, JSON.stringify(second.body)).toBe(200);
      expect(second.body).toMatchObject({ status: 'approved', resolved_by: 'biometric', rule_applied: 'two of us' });
      expect(second.body.quorum.approvals.map((x: Body) => x.device_id)).toEqual([
        first.body.quorum.approvals[0].device_id,
        expect.any(String),
      ]);
      expect(second.body.quorum.approvals[1].device_id).not.toBe(first.body.quorum.approvals[0].device_id);
      expect(second.body.receipt).toEqual(expect.any(String));
      const late = await c.post(`/actions/${req.id}/approve`);
      expect(late.status).toBe(409);
      expect(late.body.code).toBe('action_not_pending');

      await expect.poll(() => webhooksOf(req.id).length, { timeout: 10_000 }).toBe(1);
      await sleep(1000);
      expect(webhooksOf(req.id)).toEqual([expect.objectContaining({ status: 'approved', resolved_by: 'biometric' })]);
      const trail = (await a.get(`/actions/${req.id}/audit`)).body.events as Body[];
      // (Then the webhook delivery's own entries.)
      expect(trail.map((e) => e.type).slice(0, 4)).toEqual([
        'created',
        'quorum_approval',
        'quorum_approval',
        'approved',
      ]);
    });

    it('counts people: another device of a member who approved is 409 quorum_same_member; receipt and audit name the members', async () => {
      const { acct, devices, create } = await quorumAccount(2);
      const [owner, dana] = devices as [ReturnType<ApiClient['device']>, ReturnType<ApiClient['device']>];
      const ownerTablet = api.device((await owner.post('/devices', { device_name: 'tablet' })).body.device_id);
      const members = (await owner.get('/members')).body.members as Body[];
      const ownerId = members.find((m) => m.role === 'owner')!.member_id;
      const danaId = members.find((m) => m.name === 'Dana')!.member_id;
      const req = await create();
      expect((await owner.post(`/actions/${req.id}/approve`)).body.status).toBe('pending');
      const same = await ownerTablet.post(`/actions/${req.id}/approve`);
      expect(same.status).toBe(409);
      expect(same.body).toMatchObject({ code: 'quorum_same_member', detail: expect.stringMatching(/counts people/) });
      expect(
        (await owner.get(`/actions/${req.id}/audit`)).body.events.filter((e: Body) => e.type === 'quorum_approval'),
      ).toHaveLength(1);
      const done = await dana.post(`/actions/${req.id}/approve`);
      expect(done.body.status).toBe('approved');
      expect(done.body.quorum.approvals.map((a: Body) => a.member_id)).toEqual([ownerId, danaId]);
      const claims = JSON.parse(Buffer.from(done.body.receipt.split('.')[1], 'base64url').toString());
      expect(claims).toMatchObject({ member_id: danaId, device_id: done.body.quorum.approvals[1].device_id });
      const trail = (await owner.get(`/actions/${req.id}/audit`)).body.events as Body[];
      expect(trail.find((e) => e.type === 'quorum_approval')!.data.member_id).toBe(ownerId);
      expect(trail.find((e) => e.type === 'approved')).toMatchObject({ data: { member_id: danaId } });
      // Without a quorum, one person's device answers as before, and the denial names its member too.
      const plain = await api.agent(acct.api_key).post('/actions', { action_type: 'communication', title: 'Send it' });
      const denied = await ownerTablet.post(`/actions/${plain.body.id}/deny`, { reason: 'no' });
      expect(denied.body.status).toBe('denied');
      const deniedTrail = (await owner.get(`/actions/${plain.body.id}/audit`)).body.events as Body[];
      expect(deniedTrail.find((e) => e.type === 'denied')!.data.member_id).toBe(ownerId);
    });

    it('any deny denies, even after approvals', async () => {
      const { devices, create } = await quorumAccount(3);
      const req = await create();
      expect((await devices[0]!.post(`/actions/${req.id}/approve`)).body.status).toBe('pending');
      expect((await devices[1]!.post(`/actions/${req.id}/approve`)).body.status).toBe('pending');
      const denied = await devices[2]!.post(`/actions/${req.id}/deny`, { reason: 'not this one' });
      expect(denied.status).toBe(200);
      expect(denied.body).toMatchObject({ status: 'denied', resolved_by: 'user', reason: 'not this one' });
      expect(denied.body.quorum.approvals).toHaveLength(2);
      await expect.poll(() => webhooksOf(req.id).length, { timeout: 10_000 }).toBe(1);
      expect(webhooksOf(req.id)[0]).toMatchObject({ status: 'denied' });
      // One approval, then a deny from the approving device itself.
      const other = await create();
      expect((await devices[0]!.post(`/actions/${other.id}/approve`)).status).toBe(200);
      expect((await devices[0]!.post(`/actions/${other.id}/deny`)).body.status).toBe('denied');
    });

    it('requests the rule does not match, and accounts without one, carry quorum null', async () => {
      const { acct, create } = await quorumAccount(2);
      const mail = await api
        .agent(acct.api_key)
        .post('/actions', { action_type: 'communication', title: 'Send a note' });
      expect(mail.body).toMatchObject({ status: 'pending', quorum: null, rule_applied: null });
      const approved = await api.device(acct.device_id).post(`/actions/${mail.body.id}/approve`);
      expect(approved.body).toMatchObject({ status: 'approved', quorum: null });
      expect((await create()).quorum).toEqual({ required: 2, approvals: [] });
    });

    it("the lists passed on unread (/pending, /actions, /audit) carry exactly their contract's fields, as JSON", async () => {
      const { acct, devices, create } = await quorumAccount(2);
      const [holder] = devices as [ReturnType<ApiClient['device']>];
      const agent = api.agent(acct.api_key);
      const req = await create({ metadata: { order: 'A-1', lines: [{ sku: 'x', qty: 2 }] } });
      expect((await holder.post(`/actions/${req.id}/approve`)).body.quorum.approvals).toHaveLength(1);
      const note = await agent.post('/actions', { action_type: 'communication', title: 'note', recipient: 'bo' });
      expect((await holder.post(`/actions/${note.body.id}/deny`, { reason: 'no' })).status).toBe(200);
      expect((await holder.post('/spending-limits', { period: 'daily', amount_limit: 100 })).status).toBe(200);
      expect((await create()).spending_limit_exceeded).toMatchObject({ limit: 100, requested: 900 });

      const lists = [
        [holder.get('/pending'), ep.pending.response],
        [agent.get('/actions'), ep.list.response],
        [agent.get('/actions?status=denied&limit=1'), ep.list.response],
        [holder.get('/audit?limit=500'), ep.auditPage.response],
      ] as const;
      for (const [answer, contract] of lists) {
        const res = await answer;
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
        // Parsing by the contract drops any field it does not name: equal means nothing else was sent.
        expect(res.body).toEqual(contract.parse(res.body));
      }
      const pending = (await holder.get('/pending')).body.requests as Body[];
      expect(pending.find((r) => r.id === req.id)).toMatchObject({
        metadata: { order: 'A-1', lines: [{ sku: 'x', qty: 2 }] },
        quorum: { required: 2, approvals: [expect.objectContaining({ method: 'biometric' })] },
      });
      const denied = (await agent.get('/actions?status=denied')).body.actions as Body[];
      expect(denied.map((r) => r.spending_limit_exceeded ?? r.reason)).toEqual([
        expect.objectContaining({ limit: 100 }),
        'no',
      ]);
    });

    it('batch approve counts as one device approval under the quorum', async () => {
      const { devices, create } = await quorumAccount(2);
      const req = await create();
      const batch = await devices[0]!.post('/actions/approve', { requests: [{ id: req.id }] });
      expect(batch.status).toBe(200);
      expect(batch.body.results[0]).toMatchObject({ status: 200, action: { status: 'pending' } });
      const again = await devices[0]!.post('/actions/approve', { requests: [{ id: req.id }] });
      expect(again.body.results[0]).toMatchObject({ status: 409, code: 'quorum_already_approved' });
      const done = await devices[1]!.post('/actions/approve', { requests: [{ id: req.id }] });
      expect(done.body.results[0]).toMatchObject({ status: 200, action: { status: 'approved' } });
    });

    // CONCURRENCY_ROUNDS=20 repeats it on the same stack (fresh accounts each round), to show it holds every time.
    for (let round = 1; round <= ROUNDS; round++)
      it(`two devices approving at once as the last approvals resolve the request exactly once${ROUNDS > 1 ? ` (round ${round})` : ''}`, async () => {
        // Two actions replicas: the approvals may land on either (the quorum is counted in the database).
        if (mode === 'processes' && stack.processes('actions').length < 2) await stack.addProcess('actions');
        const { devices, create } = await quorumAccount(2);
        for (let race = 0; race < 5; race++) {
          const req = await create({ title: `race ${race}` });
          expect((await devices[0]!.post(`/actions/${req.id}/approve`)).body.status).toBe('pending');
          const raced = await Promise.all([1, 2].map((i) => devices[i]!.post(`/actions/${req.id}/approve`)));
          const statuses = raced.map((r) => r.status).sort();
          expect(statuses, JSON.stringify(raced.map((r) => r.body))).toEqual([200, 409]);
          const won = raced.find((r) => r.status === 200)!;
          expect(won.body).toMatchObject({ status: 'approved' });
          expect(won.body.quorum.approvals).toHaveLength(2);
          const trail = (await devices[0]!.get(`/actions/${req.id}/audit`)).body.events as Body[];
          expect(trail.filter((e) => e.type === 'approved')).toHaveLength(1);
          await expect.poll(() => webhooksOf(req.id).length, { timeout: 10_000 }).toBe(1);
        }
        // All three at once on a quorum of 3 with none before: exactly the last one approves it.
        const { devices: three, create: create3 } = await quorumAccount(3);
        const req = await create3();
        const all = await Promise.all(three.map((d) => d.post(`/actions/${req.id}/approve`)));
        expect(all.map((r) => r.status)).toEqual([200, 200, 200]);
        expect(all.filter((r) => r.body.status === 'approved')).toHaveLength(1);
        expect(all.filter((r) => r.body.status === 'pending')).toHaveLength(2);
      });
  });
}
