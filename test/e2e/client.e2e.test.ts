// The published client against the real service (all-in-one process on a real Postgres): every operation the
// service serves today, each error an agent can provoke, and waitForResult resolving on approval, denial and expiry.
import { ActionList, ActionView } from '@agent-auth/contracts';
import {
  AgentAuthClient,
  AgentAuthError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  PaymentClient,
  UnauthorizedError,
  UpstreamError,
  ValidationError,
  WaitTimeoutError,
  type Action,
} from '@agent-auth/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack } from '../harness/stack.js';
import { createTestDatabase } from '../infra/database.js';
import { startUpstream } from '../harness/upstream.js';
import { itBesideTheService } from '../harness/sessions.js';

// A type-level check that the client's hand-written Action stays assignable to the contracts' ActionView.
const _sameShape: (a: Action) => ActionView = (a) => a;
void _sameShape;

describe('client library end to end (all-in-one)', () => {
  let stack: Stack;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let api: ApiClient;
  let acct: Awaited<ReturnType<ApiClient['newAccount']>>;
  let client: AgentAuthClient;

  beforeAll(async () => {
    db = await createTestDatabase();
    stack = await startStack({ mode: 'all-in-one', databaseUrl: db.url, name: 'client' });
    api = apiClient(stack.baseUrl);
    acct = await api.newAccount();
    client = new AgentAuthClient({ apiKey: acct.api_key, baseUrl: `${stack.baseUrl}/` });
  });
  afterAll(async () => {
    await stack?.stop();
    await db?.drop();
  });

  const approveSoon = (id: string, body?: unknown) =>
    setTimeout(() => void api.device(acct.device_id).post(`/actions/${id}/approve`, body), 300);

  it('requests an action without blocking and reads its status; responses match the contracts', async () => {
    const created = await client.requestAction({
      action_type: 'purchase',
      title: 'Buy a book',
      amount: 12.5,
      risk_level: 'low',
      metadata: { order: 'A-1' },
    });
    expect(ActionView.parse(created)).toBeTruthy();
    expect(created).toMatchObject({
      status: 'pending',
      action_type: 'purchase',
      amount_cents: 1250,
      risk_level: 'low',
      metadata: { order: 'A-1' },
    });
    expect(created.id).toMatch(/^act_/);
    const read = await client.getStatus(created.id);
    expect(ActionView.parse(read)).toMatchObject({ id: created.id, status: 'pending', resolved_by: null });
  });

  it('waitForResult resolves on approval by the device', async () => {
    const { id } = await client.requestAction({ action_type: 'communication', title: 'Send the weekly report' });
    approveSoon(id);
    const done = await client.waitForResult(id, { intervalMs: 100, timeoutMs: 10_000 });
    expect(done).toMatchObject({ id, status: 'approved', resolved_by: 'biometric' });
  });

  it('waitForResult resolves on denial, with the reason', async () => {
    const { id } = await client.requestAction({ action_type: 'social', title: 'Post a tweet' });
    setTimeout(() => void api.device(acct.device_id).post(`/actions/${id}/deny`, { reason: 'not today' }), 300);
    const done = await client.waitForResult(id, { intervalMs: 100, timeoutMs: 10_000 });
    expect(done).toMatchObject({ id, status: 'denied', resolved_by: 'user', reason: 'not today' });
  });

  itBesideTheService('waitForResult resolves on expiry', async () => {
    const { id } = await client.requestAction({
      action_type: 'scheduling',
      title: 'Book a table',
      expires_in_seconds: 30,
    });
    // Move the request's clock instead of waiting 30 s: expiry compares expires_at with now().
    // postgres.js queries are lazy: .execute() sends it without awaiting.
    setTimeout(
      () =>
        void db.sql`update actions.requests set expires_at = now() - interval '1 second' where id = ${id}`.execute(),
      300,
    );
    // The held wait was timed by the old expires_at: short holds see the moved clock sooner.
    const done = await client.waitForResult(id, { intervalMs: 100, holdSeconds: 1, timeoutMs: 10_000 });
    expect(done).toMatchObject({ id, status: 'expired', resolved_by: 'system' });
  });

  it('waitForResult holds one request that the service answers as soon as the holder approves (no polling)', async () => {
    const { id } = await client.requestAction({ action_type: 'data_access', title: 'Read the CRM' });
    const calls: string[] = [];
    const counting = new AgentAuthClient({
      apiKey: acct.api_key,
      baseUrl: stack.baseUrl,
      fetch: (input, init) => {
        calls.push(String(input));
        return fetch(input, init);
      },
    });
    approveSoon(id);
    const done = await counting.waitForResult(id, { timeoutMs: 20_000 });
    expect(done).toMatchObject({ id, status: 'approved' });
    // One read, then one held read answered by the approval (a poller would have read several times).
    expect(calls.map((u) => u.slice(u.indexOf('/actions/')))).toEqual([
      `/actions/${id}`,
      expect.stringMatching(new RegExp(`^/actions/${id}\\?wait=1\\d$`)),
    ]);
  });

  it('waitForResult gives up with WaitTimeoutError after timeoutMs, and stops at once on abort', async () => {
    const { id } = await client.requestAction({ action_type: 'legal', title: 'Sign the NDA' });
    const timedOut = await client.waitForResult(id, { intervalMs: 100, timeoutMs: 400 }).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(WaitTimeoutError);
    expect((timedOut as WaitTimeoutError).action).toMatchObject({ id, status: 'pending' });

    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(new Error('agent stopped')), 200);
    await expect(client.waitForResult(id, { signal: controller.signal })).rejects.toThrow('agent stopped');
    expect(Date.now() - started).toBeLessThan(1500);
    await expect(client.getStatus(id, { signal: AbortSignal.abort() })).rejects.toThrow();
  });

  it('requestAndWait returns at once when a rule decides at creation', async (ctx) => {
    const rule = await api.device(acct.device_id).post('/rules', {
      name: 'small comms',
      decision: 'auto_approve',
      action_type: 'communication',
      risk_level_max: 'low',
    });
    // Rules are being added by another change: skip visibly until the service serves them.
    if (rule.status !== 200) return ctx.skip(`POST /rules answered ${rule.status}`);
    const done = await client.requestAndWait(
      { action_type: 'communication', title: 'Say hi', risk_level: 'low' },
      { intervalMs: 100, timeoutMs: 1000 },
    );
    expect(done).toMatchObject({ status: 'approved', rule_applied: 'small comms' });
    await api.device(acct.device_id).delete(`/rules/${rule.body.rule_id}`);
  });

  it('lists history newest first with a limit and filters', async () => {
    const fresh = await api.newAccount();
    const own = new AgentAuthClient({ apiKey: fresh.api_key, baseUrl: stack.baseUrl });
    const ids: string[] = [];
    for (const title of ['one', 'two', 'three'])
      ids.push((await own.requestAction({ action_type: 'system', title })).id);
    await api.device(fresh.device_id).post(`/actions/${ids[0]}/approve`);
    const two = await own.getHistory(2);
    expect(ActionList.parse({ actions: two, next_cursor: null }).actions.map((a) => a.title)).toEqual(['three', 'two']);
    expect((await own.getHistory()).map((a) => a.id)).toEqual([...ids].reverse());
    expect((await own.getHistory({ status: 'approved' })).map((a) => a.id)).toEqual([ids[0]]);
    expect(await own.getHistory({ action_type: 'purchase' })).toEqual([]);
  });

  it('pays through the payment-only client', async () => {
    const payments = new PaymentClient({ apiKey: acct.api_key, baseUrl: stack.baseUrl });
    const req = await payments.requestPayment({ amount: 42, merchant: 'Acme Books', description: 'Three paperbacks' });
    expect(req).toMatchObject({
      status: 'pending',
      action_type: 'purchase',
      amount: 42,
      currency: 'USD',
      recipient: 'Acme Books',
      description: 'Three paperbacks',
      reversible: false,
    });
    expect(req.title).toBe('Pay Acme Books 42.00 USD');
    approveSoon(req.id, { payment_method: 'wallet_pay' });
    expect(await payments.waitForResult(req.id, { intervalMs: 100, timeoutMs: 10_000 })).toMatchObject({
      status: 'approved',
      resolved_by: 'wallet_pay',
    });
  });

  it('throws a typed error per status the agent can meet: 400, 401, 404', async () => {
    const bad = await client
      .requestAction({ action_type: 'purchase', title: 'x', amount: -1 })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ValidationError);
    expect(bad).toBeInstanceOf(AgentAuthError);
    expect(bad).toMatchObject({ status: 400, detail: expect.stringMatching(/^amount: must be positive/) });
    // A value the type system forbids still reaches the service from untyped callers.
    await expect(client.requestAction({ action_type: 'teleport' as never, title: 'x' })).rejects.toMatchObject({
      name: 'ValidationError',
      detail: expect.stringMatching(/^action_type: /),
    });
    await expect(client.getHistory(0)).rejects.toBeInstanceOf(ValidationError);

    const stranger = new AgentAuthClient({
      apiKey: 'aa_abcdefghijkl_abcdefghijklmnopqrstuvwxyzABCDEF',
      baseUrl: stack.baseUrl,
    });
    await expect(stranger.getHistory()).rejects.toMatchObject({
      name: 'UnauthorizedError',
      status: 401,
      detail: 'Invalid API key',
    });
    await expect(stranger.getStatus('act_x')).rejects.toBeInstanceOf(UnauthorizedError);

    const missing = await client.getStatus('act_doesnotexist').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({ status: 404, detail: "Action request 'act_doesnotexist' not found" });
    await expect(client.waitForResult('act_doesnotexist', { intervalMs: 50 })).rejects.toBeInstanceOf(NotFoundError);
  });

  it('reads the spending summary when the service serves it', async (ctx) => {
    const probe = await api.agent(acct.api_key).get('/agent/spending-summary');
    if (probe.status === 404 && /No route/.test(probe.body?.detail ?? ''))
      return ctx.skip('GET /agent/spending-summary is not served yet');
    const fresh = await api.newAccount();
    const own = new AgentAuthClient({ apiKey: fresh.api_key, baseUrl: stack.baseUrl });
    expect(await own.getSpendingSummary()).toEqual({ agent_id: fresh.agent_id, summaries: [] });
    const limit = await api.device(fresh.device_id).post('/spending-limits', { period: 'daily', amount_limit: 100 });
    expect(limit.status).toBe(200);
    const paid = await own.requestAction({ action_type: 'purchase', title: 'Lunch', amount: 25 });
    await api.device(fresh.device_id).post(`/actions/${paid.id}/approve`);
    const summary = await own.getSpendingSummary();
    expect(summary.summaries).toEqual([
      expect.objectContaining({ period: 'daily', limit: 100, spent: 25, remaining: 75, utilization: 0.25 }),
    ]);
    // Over the limit: denied at creation, with the figures.
    const over = await own.requestAction({ action_type: 'purchase', title: 'TV', amount: 80 });
    expect(over).toMatchObject({
      status: 'denied',
      spending_limit_exceeded: { period: 'daily', limit: 100, spent: 25, requested: 80 },
    });
  });

  it('executeApiCall: the holder approves the exact call, the service injects the credential, the secret never reaches the agent', async () => {
    const secret = 'client-e2e-secret-0123456789';
    const upstream = await startUpstream({
      handler: (req, res) =>
        res
          .writeHead(201, { 'content-type': 'application/json' })
          .end(JSON.stringify({ got: req.headers.authorization, body: req.body })),
    });
    try {
      const stored = await api.device(acct.device_id).post('/vault/credentials', {
        service_name: 'client-api',
        credential_value: secret,
        allowed_hosts: ['127.0.0.1'],
        description: 'loopback test API',
      });
      expect(stored.status).toBe(200);
      expect(await client.listVaultServices()).toContainEqual({
        service_name: 'client-api',
        auth_type: 'bearer',
        allowed_hosts: ['127.0.0.1'],
        description: 'loopback test API',
      });

      // The device approves with the content hash it is shown, once the request is pending.
      const approving = (async () => {
        for (let i = 0; i < 50; i++) {
          const pending = (await api.device(acct.device_id).get('/pending')).body.requests as Array<{
            id: string;
            content_hash: string | null;
            metadata: { service_name?: string };
          }>;
          const mine = pending.find((r) => r.metadata.service_name === 'client-api');
          if (mine)
            return api.device(acct.device_id).post(`/actions/${mine.id}/approve`, { content_hash: mine.content_hash });
          await new Promise((r) => setTimeout(r, 100));
        }
        throw new Error('the vault request never showed up in /pending');
      })();
      const result = await client.executeApiCall(
        {
          service_name: 'client-api',
          method: 'post',
          url: `${upstream.origin}/items`,
          headers: { 'content-type': 'application/json' },
          body: '{"name":"x"}',
        },
        { intervalMs: 100, timeoutMs: 10_000 },
      );
      expect((await approving).status).toBe(200);
      expect(result.action).toMatchObject({ status: 'approved', action_type: 'system' });
      expect(result.action.content_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(result.response).toMatchObject({ status_code: 201 });
      expect(JSON.parse(result.response!.body)).toEqual({ got: 'Bearer [redacted]', body: '{"name":"x"}' });
      expect(upstream.seen.at(-1)!.headers.authorization).toBe(`Bearer ${secret}`);
      expect(JSON.stringify(result)).not.toContain(secret);

      await expect(client.executeApproved(result.action.id)).rejects.toBeInstanceOf(ConflictError);
      const unapproved = await client.requestApiCall({
        service_name: 'client-api',
        method: 'GET',
        url: `${upstream.origin}/x`,
      });
      await expect(client.executeApproved(unapproved.id)).rejects.toBeInstanceOf(ForbiddenError);
    } finally {
      await upstream.close();
    }
  });

  it("executeApproved: an upstream that cannot be reached is an UpstreamError (502) with the service's detail", async () => {
    const gone = await startUpstream({ handler: (_req, res) => res.end() });
    const origin = gone.origin;
    await gone.close(); // nothing listens on that port any more
    const stored = await api.device(acct.device_id).post('/vault/credentials', {
      service_name: 'client-down',
      credential_value: 'down-secret-value',
      allowed_hosts: ['127.0.0.1'],
    });
    expect(stored.status).toBe(200);
    const asked = await client.requestApiCall({ service_name: 'client-down', method: 'GET', url: `${origin}/status` });
    expect(
      (await api.device(acct.device_id).post(`/actions/${asked.id}/approve`, { content_hash: asked.content_hash }))
        .status,
    ).toBe(200);
    const failed = await client.executeApproved(asked.id).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(UpstreamError);
    expect(failed).toMatchObject({ status: 502, detail: expect.stringMatching(/\S/) });
    expect(String((failed as UpstreamError).detail)).not.toContain('down-secret-value');
  });
});
