import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AgentAuthClient, RateLimitedError } from '@agent-auth/client';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient, type Reply } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', skip: false },
];
const SPEC_LIMITS = {
  RATE_LIMIT_WINDOW_SECONDS: '60',
  RATE_LIMIT_AGENT: '120',
  RATE_LIMIT_DEVICE: '60',
  RATE_LIMIT_IP: '10',
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function expectHeaders(r: Reply, limit: number) {
  expect(r.headers.get('x-ratelimit-limit'), `status ${r.status}`).toBe(String(limit));
  expect(Number(r.headers.get('x-ratelimit-remaining'))).toBeGreaterThanOrEqual(0);
  expect(Number(r.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(0);
  expect(Number(r.headers.get('x-ratelimit-reset'))).toBeLessThanOrEqual(60);
}

function expect429(r: Reply, limit: number) {
  expect(r.status).toBe(429);
  expectHeaders(r, limit);
  expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
  expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(Number(r.headers.get('retry-after'))).toBeLessThanOrEqual(60);
  expect(r.body.detail).toMatch(/^Rate limit of \d+ requests per 60 s exceeded/);
}

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`rate limits at their default values (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let one: ApiClient;
    let two: ApiClient; // a second gateway process in processes mode (the limits are shared); the same one otherwise

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode, databaseUrl: db.url, natsUrl, name: 'rate-limits', env: SPEC_LIMITS });
      one = apiClient(stack.baseUrl);
      two = mode === 'processes' ? apiClient(await stack.addGateway()) : one;
    });
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    it('agents: 120 requests a minute per API key, shared by both gateways; the 121st is 429 with the headers', async () => {
      const acct = await one.newAccount(); // 1 of the IP's 10
      const first = await one.agent(acct.api_key).get('/actions');
      expect(first.status).toBe(200);
      expectHeaders(first, 120);
      expect(first.headers.get('x-ratelimit-remaining')).toBe('119');
      expect(first.headers.get('retry-after')).toBeNull();

      const bad = await two.agent(acct.api_key).post('/actions', { title: 'no type' }); // errors carry the headers too
      expect(bad.status).toBe(400);
      expectHeaders(bad, 120);
      expect(bad.headers.get('x-ratelimit-remaining')).toBe('118');

      const burst = await Promise.all(
        Array.from({ length: 130 }, (_, i) =>
          (i % 2 ? two : one)
            .agent(acct.api_key)
            .post('/actions', { action_type: 'purchase', title: `p${i}`, amount: 1 }),
        ),
      );
      const ok = burst.filter((r) => r.status === 200);
      expect(ok).toHaveLength(118);
      const limited = burst.filter((r) => r.status === 429);
      expect(limited).toHaveLength(12);
      for (const r of limited) expect429(r, 120);
      for (const r of ok) expectHeaders(r, 120);
      // The next one, on either gateway: still refused; the device's own budget is separate.
      expect429(await one.agent(acct.api_key).get('/actions'), 120);
      expect429(await two.agent(acct.api_key).get('/actions'), 120);
      // The agent client library surfaces it as a typed error carrying Retry-After.
      const client = new AgentAuthClient({ apiKey: acct.api_key, baseUrl: stack.baseUrl, maxRetries: 0 });
      const err = await client
        .requestAction({ action_type: 'purchase', title: 'one more', amount: 1 })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RateLimitedError);
      expect((err as RateLimitedError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
      const pending = await two.device(acct.device_id).get('/pending');
      expect(pending.status).toBe(200);
      expectHeaders(pending, 60);
    });

    it('devices: 60 requests a minute per device across both gateways', async () => {
      const acct = await two.newAccount(); // 2 of the IP's 10
      const burst = await Promise.all(
        Array.from({ length: 70 }, (_, i) => (i % 2 ? two : one).device(acct.device_id).get('/pending')),
      );
      expect(burst.filter((r) => r.status === 200)).toHaveLength(60);
      const limited = burst.filter((r) => r.status === 429);
      expect(limited).toHaveLength(10);
      for (const r of limited) expect429(r, 60);
    });

    it('IP: 10 a minute for unauthenticated and failed-auth requests; unknown routes carry the headers; health probes are exempt', async () => {
      const unknown = await one.call('GET', '/no-such-route'); // 3 of 10
      expect(unknown.status).toBe(404);
      expectHeaders(unknown, 10);
      const attempts = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 ? two : one).agent('aa_notakey_000000000000000000000000000000000').get('/actions'),
        ),
      );
      const unauthorized = attempts.filter((r) => r.status === 401);
      expect(unauthorized).toHaveLength(7);
      for (const r of unauthorized) expectHeaders(r, 10);
      for (const r of attempts.filter((a) => a.status !== 401)) expect429(r, 10);
      expect429(await one.call('POST', '/accounts', { body: {} }), 10);
      // X-Forwarded-For is not trusted by default: a caller cannot pick a fresh budget.
      expect429(await one.call('POST', '/accounts', { body: {}, headers: { 'x-forwarded-for': '198.51.100.7' } }), 10);
      expect429(await two.device('dev_wrong').get('/pending'), 10);
      const health = await fetch(stack.baseUrl.replace(/\/api\/v1$/, '/healthz'));
      expect(health.status).toBe(200);
    });
  });
}

describe('sliding window at a boundary, trusted proxy (all-in-one, 2 s window, 5 requests per device, 3 per IP)', () => {
  let stack: Stack;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let api: ApiClient;

  beforeAll(async () => {
    db = await createTestDatabase();
    stack = await startStack({
      mode: 'all-in-one',
      databaseUrl: db.url,
      natsUrl,
      name: 'rate-window',
      env: { RATE_LIMIT_WINDOW_SECONDS: '2', RATE_LIMIT_DEVICE: '5', RATE_LIMIT_IP: '3', TRUST_PROXY: '127.0.0.1' },
    });
    api = apiClient(stack.baseUrl);
  });
  afterAll(async () => {
    await stack?.stop();
    await db?.drop();
  });

  it('a burst never passes the limit: not when a fixed window would have turned over, and slots free exactly as requests age out', async () => {
    const acct = await api.newAccount();
    const device = api.device(acct.device_id);
    const burst = (n: number) => Promise.all(Array.from({ length: n }, () => device.get('/pending')));
    const started = Date.now();
    const first = await burst(8);
    expect(first.filter((r) => r.status === 200)).toHaveLength(5);
    const firstDone = Date.now();
    const retryAfter = Number(first.find((r) => r.status === 429)!.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(2);

    // 1.2 s later: a fixed 1-s or 2-s window could have reset here; the sliding window is still full.
    await sleep(Math.max(0, started + 1200 - Date.now()));
    const middle = await burst(10);
    expect(middle.filter((r) => r.status === 200)).toHaveLength(0);

    // Once the first five are more than 2 s old, exactly five slots are free again (the refused ones took none).
    await sleep(Math.max(0, firstDone + 2100 - Date.now()));
    const after = await burst(10);
    expect(after.filter((r) => r.status === 200)).toHaveLength(5);
    expect(after.filter((r) => r.status === 429)).toHaveLength(5);
  });

  it('behind a trusted proxy, each client named by X-Forwarded-For has its own IP budget', async () => {
    await sleep(2100); // the account creation above has left the window
    const from = (ip: string) => api.call('GET', '/pending', { headers: { 'x-forwarded-for': ip } }); // no device id: 401, counted by IP
    const first = await Promise.all(Array.from({ length: 4 }, () => from('203.0.113.1')));
    expect(first.map((r) => r.status).sort()).toEqual([401, 401, 401, 429]);
    const other = await from('203.0.113.2');
    expect(other.status).toBe(401);
    expect(other.headers.get('x-ratelimit-remaining')).toBe('2');
  });
});
