import { setTimeout as sleep } from 'node:timers/promises';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { inviteAndJoin } from '../harness/members.js';
import { openEventStream, type SseStream } from '../harness/sse.js';
import { startStack, type Stack } from '../harness/stack.js';

// Routing and escalation over real NATS: two replicas of the actions service (both run the escalation scheduler)
// and two gateways. A rule routes purchases to one approver and escalates to the admins after 5 s.
const { natsUrl } = inject('infra');
const skip = natsUrl ? false : 'no NATS server reachable and no Docker';

type Body = Record<string, any>;

describe.skipIf(skip)(
  `routing and escalation (two actions replicas, two gateways${skip ? `; skipped: ${skip}` : ''})`,
  () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let api2: ApiClient;
    let url2: string;
    let second: ChildProcess;
    const streams: SseStream[] = [];

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode: 'processes', databaseUrl: db.url, natsUrl, name: 'routing' });
      second = await stack.addProcess('actions');
      api = apiClient(stack.baseUrl);
      url2 = await stack.addGateway();
      api2 = apiClient(url2);
    }, 180_000);
    afterAll(async () => {
      for (const s of streams) s.close();
      await stack?.stop();
      await db?.drop();
    });

    /** An owner, Dana (finance, approver), Lee (approver) and Ada (admin); purchases go to Dana, then the admins. */
    const team = async (rule: Body = {}) => {
      const acct = await api.newAccount();
      const dana = await inviteAndJoin(api, acct.device_id, { name: 'Dana', role: 'approver' });
      const lee = await inviteAndJoin(api, acct.device_id, { name: 'Lee', role: 'approver' });
      const ada = await inviteAndJoin(api, acct.device_id, { name: 'Ada', role: 'admin' });
      const created = await api.device(acct.device_id).post('/rules', {
        name: 'purchases to finance',
        decision: 'ask',
        action_type: 'purchase',
        approvers: [dana.member_id],
        escalate_after_seconds: 5,
        escalate_to: ['role:admin'],
        ...rule,
      });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const create = async (title: string) => {
        const r = await api.agent(acct.api_key).post('/actions', { action_type: 'purchase', title, amount: 12 });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        return r.body as Body;
      };
      return { acct, dana, lee, ada, rule: created.body as Body, create };
    };

    const pendingIds = async (client: ApiClient, deviceId: string) => {
      const r = await client.device(deviceId).get('/pending');
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return (r.body.requests as Body[]).map((q) => q.id);
    };

    const escalatedEvents = async (requestId: string) =>
      db.sql<Array<{ detail: Body }>>`
      select detail from actions.audit_events where request_id = ${requestId} and event = 'escalated'`;

    it('a rule says ask, names approvers and an escalation; GET /rules shows them', async () => {
      const { rule, dana } = await team();
      expect(rule).toMatchObject({
        decision: 'ask',
        approvers: [dana.member_id],
        escalate_after_seconds: 5,
        escalate_to: ['role:admin'],
      });
      const bad = await api.device((await api.newAccount()).device_id).post('/rules', {
        name: 'no',
        decision: 'auto_approve',
        approvers: [dana.member_id],
      });
      expect(bad.status).toBe(400);
      expect(bad.body.detail).toMatch(/^approvers: is only for decision ask or require_quorum/);
      // No SMTP_URL here: the notifier said once that email is off.
      expect(stack.logs().match(/email off: SMTP_URL is not set/g)).toHaveLength(1);
    });

    it('only the approvers see and answer it; others are 403 (single and in a batch); the escalated see and answer it after the timer, notified on their stream', async () => {
      const { acct, dana, lee, ada, create } = await team();
      // Ada's stream on the second gateway, Lee's on the first: only Ada is told of the escalation.
      const adaStream = await openEventStream(`${url2}/device/events`, { 'x-device-id': ada.device_id });
      const leeStream = await openEventStream(`${stack.baseUrl}/device/events`, { 'x-device-id': lee.device_id });
      const danaStream = await openEventStream(`${url2}/device/events`, { 'x-device-id': dana.device_id });
      streams.push(adaStream, leeStream, danaStream);
      const req = await create('Laptop');
      expect(req.status).toBe('pending');
      const createdAt = Date.now();
      // Its creation is told to its approver only.
      await danaStream.next((e) => e.event === 'action.created' && e.data.action.id === req.id);
      await sleep(200);
      expect(leeStream.events.filter((e) => e.data.action?.id === req.id)).toEqual([]);
      expect(adaStream.events.filter((e) => e.data.action?.id === req.id)).toEqual([]);

      expect(await pendingIds(api, dana.device_id)).toContain(req.id);
      const entry = async (deviceId: string) =>
        ((await api.device(deviceId).get('/pending')).body.requests as Body[]).find((q) => q.id === req.id);
      expect((await entry(dana.device_id))?.routing).toEqual({
        approvers: [dana.member_id],
        escalate_at: expect.any(String),
        escalate_to: ['role:admin'],
        escalated_at: null,
      });
      for (const [client, who] of [
        [api2, lee.device_id],
        [api, ada.device_id],
        [api2, acct.device_id],
      ] as const)
        expect(await pendingIds(client, who)).not.toContain(req.id);

      const refused = await api2.device(lee.device_id).post(`/actions/${req.id}/approve`, {});
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('not_request_approver');
      const owner = await api.device(acct.device_id).post(`/actions/${req.id}/deny`, { reason: 'no' });
      expect(owner.status).toBe(403);
      const other = await create('Mouse');
      const batch = await api.device(lee.device_id).post('/actions/deny', { requests: [{ id: other.id }] });
      expect(batch.status).toBe(200);
      expect(batch.body.results).toEqual([
        { id: other.id, status: 403, code: 'not_request_approver', detail: expect.stringContaining(other.id) },
      ]);

      // Before the timer the admins still cannot answer it.
      expect((await api.device(ada.device_id).post(`/actions/${req.id}/approve`, {})).status).toBe(403);
      const event = await Promise.race([
        adaStream.next((e) => e.event === 'action.escalated' && e.data.action.id === req.id),
        sleep(15_000).then(() => undefined),
      ]);
      expect(event, 'the escalation reached the admin').toBeDefined();
      const lateMs = Date.parse(event!.data.escalation.escalated_at) - Date.parse(event!.data.escalation.escalate_at);
      expect(lateMs).toBeGreaterThanOrEqual(0);
      expect(lateMs).toBeLessThan(1_000);
      expect(Date.now() - createdAt).toBeGreaterThanOrEqual(4_000);
      expect(event!.data.escalation.members).toEqual([{ member_id: ada.member_id, name: 'Ada' }]);
      expect(JSON.stringify(event!.data)).not.toContain('@');
      expect(leeStream.events.filter((e) => e.event === 'action.escalated')).toEqual([]);

      expect(await pendingIds(api2, ada.device_id)).toContain(req.id);
      // Every entry of it shows the escalation now (a kept entry is built again).
      for (const who of [dana.device_id, ada.device_id, dana.device_id])
        expect((await entry(who))?.routing?.escalated_at).toBe(event!.data.escalation.escalated_at);
      expect(await pendingIds(api, lee.device_id)).not.toContain(req.id);
      const approved = await api2.device(ada.device_id).post(`/actions/${req.id}/approve`, {});
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);
      expect(approved.body.status).toBe('approved');

      const trail = (await api.device(acct.device_id).get(`/actions/${req.id}/audit`)).body.events as Body[];
      const escalated = trail.filter((e) => e.type === 'escalated');
      expect(escalated).toHaveLength(1);
      expect(escalated[0]).toMatchObject({
        actor: 'system',
        data: { escalate_to: ['role:admin'], member_ids: [ada.member_id] },
      });
    }, 60_000);

    it('each request is escalated once by one of the two replicas, and a killed replica leaves them to the other', async () => {
      const { ada, create } = await team();
      const many = await Promise.all(Array.from({ length: 12 }, (_, i) => create(`Item ${i}`)));
      // Kill one replica (no goodbye): the other escalates every request.
      await sleep(1_000);
      const victim = stack.processes('actions').find((p) => p !== second)!;
      victim.kill('SIGKILL');
      const deadline = Date.now() + 20_000;
      let counts: number[] = [];
      while (Date.now() < deadline) {
        counts = await Promise.all(many.map(async (r) => (await escalatedEvents(r.id)).length));
        if (counts.every((c) => c === 1)) break;
        await sleep(250);
      }
      expect(counts).toEqual(many.map(() => 1));
      await sleep(1_500);
      counts = await Promise.all(many.map(async (r) => (await escalatedEvents(r.id)).length));
      expect(counts, 'no request escalated twice').toEqual(many.map(() => 1));
      const seen = await pendingIds(api2, ada.device_id);
      for (const r of many) expect(seen).toContain(r.id);
    }, 60_000);

    it('a replay of a draft ask rule reports ask', async () => {
      const { acct, create } = await team({ action_type: 'legal' });
      await create('Chair');
      const r = await api.device(acct.device_id).post('/rules/simulate', {
        rule: { decision: 'ask', action_type: 'purchase', approvers: ['role:owner'] },
        days: 1,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ evaluated: 1, ask: 1, pending: 0 });
    }, 30_000);
  },
);
