import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';
import { selfSignedCert, startUpstream, type SeenRequest, type Upstream, trustFile } from '../harness/upstream.js';
import { itBesideTheService } from '../harness/sessions.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', skip: false },
];

/**
 * A receiver on loopback over real TLS: /ok answers 204, /flaky fails twice per webhook then 200, /gone 410,
 * /redirect 302 to /ok, /slow answers the first attempt of each webhook after 5 s (past the 3 s time-out).
 */
async function startReceiver(): Promise<{ receiver: Upstream; caFile: string }> {
  const cert = selfSignedCert();
  const caFile = trustFile(cert);
  const tries = new Map<string, number>();
  const receiver = await startUpstream({
    tls: cert,
    handler: (req, res) => {
      const id = String(req.headers['webhook-id']);
      const n = (tries.get(id) ?? 0) + 1;
      tries.set(id, n);
      if (req.url.startsWith('/slow') && n === 1) return void setTimeout(() => res.writeHead(200).end(), 5000);
      if (req.url.startsWith('/redirect')) res.writeHead(302, { location: '/ok' });
      else if (req.url.startsWith('/gone')) res.writeHead(410);
      else if (req.url.startsWith('/flaky') && n <= 2) res.writeHead(503);
      else res.writeHead(req.url.startsWith('/ok') ? 204 : 200);
      res.end();
    },
  });
  return { receiver, caFile };
}

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`webhooks end to end (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let acct: Awaited<ReturnType<ApiClient['newAccount']>>;
    let receiver: Upstream;

    beforeAll(async () => {
      db = await createTestDatabase();
      const started = await startReceiver();
      receiver = started.receiver;
      stack = await startStack({
        mode,
        databaseUrl: db.url,
        natsUrl,
        name: 'webhooks',
        env: {
          NODE_EXTRA_CA_CERTS: started.caFile,
          WEBHOOK_RETRY_SCHEDULE: '0.3,0.3,0.3,0.3',
          WEBHOOK_TIMEOUT_MS: '3000',
          SWEEP_INTERVAL_MS: '200',
        },
      });
      api = apiClient(stack.baseUrl);
      acct = await api.newAccount();
    });
    afterAll(async () => {
      await stack?.stop();
      await receiver?.close();
      await db?.drop();
    });

    // A request's webhook audit events (attempts, delivery, failure), in the order they were written.
    const webhookAudit = async (requestId: string) =>
      db.sql<Array<{ event: string; detail: Record<string, unknown> }>>`
        select event, detail from actions.audit_events
        where request_id = ${requestId} and event like 'webhook%' order by id`;
    const arrivals = (requestId: string): SeenRequest[] =>
      receiver.seen.filter((r) => r.body.includes(`"id":"${requestId}"`));

    /** Waits for the request's webhook to arrive (2xx path), verifies its signature with the standardwebhooks package. */
    async function verifiedWebhook(requestId: string, secret = acct.webhook_secret) {
      await expect.poll(() => arrivals(requestId).length, { timeout: 10_000 }).toBeGreaterThan(0);
      const seen = arrivals(requestId).at(-1)!;
      expect(seen.method).toBe('POST');
      expect(seen.headers['content-type']).toBe('application/json');
      expect(String(seen.headers['webhook-id'])).toMatch(/^msg_/);
      expect(Math.abs(Number(seen.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      expect(String(seen.headers['webhook-signature'])).toMatch(/^v1,/);
      const payload = new Webhook(secret).verify(seen.body, seen.headers as Record<string, string>) as Record<
        string,
        unknown
      >;
      return { payload, seen };
    }

    const create = (body: Record<string, unknown>, apiKey = acct.api_key) =>
      api.agent(apiKey).post('/actions', {
        action_type: 'purchase',
        title: 'Buy a lamp',
        amount: 42.5,
        callback_url: `${receiver.origin}/ok`,
        ...body,
      });

    it('delivers a signed webhook with the documented fields when the device approves', async () => {
      const created = await create({ risk_level: 'high' });
      expect(created.status).toBe(200);
      const approved = await api.device(acct.device_id).post(`/actions/${created.body.id}/approve`);
      expect(approved.status).toBe(200);
      const { payload } = await verifiedWebhook(created.body.id);
      expect(payload).toEqual({
        id: created.body.id,
        status: 'approved',
        action_type: 'purchase',
        title: 'Buy a lamp',
        risk_level: 'high',
        amount: 42.5,
        resolved_by: 'biometric',
        resolved_at: approved.body.resolved_at,
        created_at: created.body.created_at,
        receipt: approved.body.receipt,
      });
    });

    it("delivers the agent's cancel, with its receipt, and records it in the request's audit trail", async () => {
      const created = await create({});
      const cancelled = await api.agent(acct.api_key).post(`/actions/${created.body.id}/cancel`);
      expect(cancelled.status).toBe(200);
      const { payload } = await verifiedWebhook(created.body.id);
      expect(payload).toMatchObject({
        id: created.body.id,
        status: 'cancelled',
        resolved_by: 'agent',
        receipt: cancelled.body.receipt,
      });
      const audit = await db.sql<Array<{ event: string; actor: string }>>`
        select event, actor from actions.audit_events where request_id = ${created.body.id} order by id`;
      expect(audit.map((e) => e.event).slice(0, 2)).toEqual(['created', 'cancelled']);
      expect(audit[1]!.actor).toBe(`agent:${acct.agent_id}`);
    });

    it('delivers the denial', async () => {
      const created = await create({ amount: null, action_type: 'communication', title: 'Send the memo' });
      expect(
        (await api.device(acct.device_id).post(`/actions/${created.body.id}/deny`, { reason: 'not now' })).status,
      ).toBe(200);
      const { payload } = await verifiedWebhook(created.body.id);
      expect(payload).toMatchObject({
        id: created.body.id,
        status: 'denied',
        resolved_by: 'user',
        amount: null,
        action_type: 'communication',
      });
    });

    itBesideTheService('delivers the expiry found by the sweeper, with nobody reading the request', async () => {
      const created = await create({ expires_in_seconds: 30 });
      await db.sql`update actions.requests set expires_at = now() - interval '1 second' where id = ${created.body.id}`;
      const { payload } = await verifiedWebhook(created.body.id);
      expect(payload).toMatchObject({ id: created.body.id, status: 'expired', resolved_by: 'system' });
    });

    itBesideTheService('delivers the expiry applied lazily on read', async () => {
      const created = await create({ expires_in_seconds: 30 });
      // Read and expire in one go: the sweeper (every 200 ms) may or may not get there first; either way one webhook.
      await db.sql`update actions.requests set expires_at = now() - interval '1 second' where id = ${created.body.id}`;
      const read = await api.agent(acct.api_key).get(`/actions/${created.body.id}`);
      expect(read.body.status).toBe('expired');
      const { payload } = await verifiedWebhook(created.body.id);
      expect(payload).toMatchObject({ status: 'expired', resolved_by: 'system' });
      await new Promise((r) => setTimeout(r, 500));
      expect(arrivals(created.body.id)).toHaveLength(1);
    });

    it('delivers a decision made by a rule at creation', async () => {
      const rule = await api
        .device(acct.device_id)
        .post('/rules', { name: 'small scheduling', decision: 'auto_approve', action_type: 'scheduling' });
      expect(rule.status).toBe(200);
      const created = await create({ action_type: 'scheduling', title: 'Book the dentist', amount: null });
      expect(created.body.status).toBe('approved');
      const { payload } = await verifiedWebhook(created.body.id);
      expect(payload).toMatchObject({ status: 'approved', resolved_by: 'rule:small scheduling' });
    });

    it('delivers a denial by a spending limit at creation', async () => {
      const other = await api.newAccount();
      const limit = await api.device(other.device_id).post('/spending-limits', { period: 'daily', amount_limit: 10 });
      expect(limit.status).toBe(200);
      const created = await create({ amount: 50 }, other.api_key);
      expect(created.body.status).toBe('denied');
      const { payload } = await verifiedWebhook(created.body.id, other.webhook_secret);
      expect(payload).toMatchObject({
        status: 'denied',
        amount: 50,
        resolved_by: `spending_limit:${limit.body.limit_id}`,
      });
    });

    it('signs with the secret of the agent that asked', async () => {
      const other = await api.device(acct.device_id).post('/agents', { name: 'second' });
      const created = await create({}, other.body.api_key);
      await api.device(acct.device_id).post(`/actions/${created.body.id}/approve`);
      await verifiedWebhook(created.body.id, other.body.webhook_secret);
      expect(() =>
        new Webhook(acct.webhook_secret).verify(
          arrivals(created.body.id)[0]!.body,
          arrivals(created.body.id)[0]!.headers as Record<string, string>,
        ),
      ).toThrow();
    });

    itBesideTheService('retries a failing receiver with the same webhook-id and records every attempt', async () => {
      const created = await create({ callback_url: `${receiver.origin}/flaky` });
      await api.device(acct.device_id).post(`/actions/${created.body.id}/approve`);
      await expect.poll(() => arrivals(created.body.id).length, { timeout: 10_000 }).toBe(3);
      const ids = new Set(arrivals(created.body.id).map((r) => r.headers['webhook-id']));
      expect(ids.size).toBe(1);
      for (const seen of arrivals(created.body.id))
        new Webhook(acct.webhook_secret).verify(seen.body, seen.headers as Record<string, string>);
      await expect
        .poll(
          async () =>
            (await webhookAudit(created.body.id)).map((r) => [r.event, r.detail.status_code, r.detail.attempt]),
          { timeout: 5000 },
        )
        .toEqual([
          ['webhook_attempt_failed', 503, 1],
          ['webhook_attempt_failed', 503, 2],
          ['webhook_delivered', 200, 3],
        ]);
      const [audited] =
        await db.sql`select detail from actions.audit_events where request_id = ${created.body.id} and event = 'webhook_delivered'`;
      expect(audited!.detail).toMatchObject({ webhook_id: [...ids][0], latency_ms: expect.any(Number), error: null });
      await new Promise((r) => setTimeout(r, 800));
      expect(arrivals(created.body.id)).toHaveLength(3);
    });

    itBesideTheService('stops at 410 Gone', async () => {
      const created = await create({ callback_url: `${receiver.origin}/gone` });
      await api.device(acct.device_id).post(`/actions/${created.body.id}/approve`);
      await expect.poll(() => arrivals(created.body.id).length, { timeout: 10_000 }).toBe(1);
      await expect
        .poll(async () => (await webhookAudit(created.body.id)).map((r) => r.event), { timeout: 5000 })
        .toEqual(['webhook_failed']);
      await new Promise((r) => setTimeout(r, 1000)); // three retry intervals: nothing more may come
      expect(arrivals(created.body.id)).toHaveLength(1);
    });

    itBesideTheService('counts a receiver that does not answer in time as a failed attempt, and retries', async () => {
      const created = await create({ callback_url: `${receiver.origin}/slow` });
      await api.device(acct.device_id).post(`/actions/${created.body.id}/approve`);
      await expect
        .poll(
          async () =>
            (await webhookAudit(created.body.id)).map((r) => [r.event, r.detail.status_code, r.detail.attempt]),
          { timeout: 15_000 },
        )
        .toEqual([
          ['webhook_attempt_failed', null, 1],
          ['webhook_delivered', 200, 2],
        ]);
      const [failed] =
        await db.sql`select detail from actions.audit_events where request_id = ${created.body.id} and event = 'webhook_attempt_failed'`;
      expect(failed!.detail.error).toMatch(/did not answer in time/);
      expect(failed!.detail.latency_ms).toBeGreaterThanOrEqual(2900);
      expect(failed!.detail.latency_ms).toBeLessThan(4500);
    });

    itBesideTheService('never follows a redirect: retried through the whole schedule, then failed', async () => {
      const created = await create({ callback_url: `${receiver.origin}/redirect` });
      await api.device(acct.device_id).post(`/actions/${created.body.id}/approve`);
      await expect
        .poll(async () => (await webhookAudit(created.body.id)).map((r) => r.event), { timeout: 15_000 })
        .toEqual([
          'webhook_attempt_failed',
          'webhook_attempt_failed',
          'webhook_attempt_failed',
          'webhook_attempt_failed',
          'webhook_failed',
        ]);
      expect(arrivals(created.body.id).map((r) => r.url)).toEqual(Array(5).fill('/redirect'));
      const [last] =
        await db.sql`select detail from actions.audit_events where request_id = ${created.body.id} and event = 'webhook_failed'`;
      expect(last!.detail).toMatchObject({ status_code: 302, attempt: 5, next_attempt_at: null });
    });

    itBesideTheService(
      'fails at once, without retries, a callback whose address the outbound rules refuse (loopback not configured)',
      async () => {
        const created = await create({ callback_url: 'https://127.0.0.2:9/hook' });
        expect(created.status).toBe(200);
        await api.device(acct.device_id).post(`/actions/${created.body.id}/approve`);
        await expect
          .poll(async () => (await webhookAudit(created.body.id)).map((r) => r.event), { timeout: 10_000 })
          .toEqual(['webhook_failed']);
        const [last] =
          await db.sql`select detail from actions.audit_events where request_id = ${created.body.id} and event = 'webhook_failed'`;
        expect(last!.detail).toMatchObject({ attempt: 1, status_code: null, next_attempt_at: null });
        expect(String((last!.detail as { error: string }).error)).toMatch(/127\.0\.0\.2|loopback|refused/i);
      },
    );

    it('sends nothing for requests without a callback_url, nor for creation', async () => {
      const before = receiver.seen.length;
      const created = await create({ callback_url: null });
      await api.device(acct.device_id).post(`/actions/${created.body.id}/approve`);
      const pendingOnly = await create({});
      await new Promise((r) => setTimeout(r, 700));
      expect(receiver.seen.length).toBe(before);
      expect(arrivals(pendingOnly.body.id)).toHaveLength(0);
    });
  });
}
