import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack } from '../harness/stack.js';
// The device app's own signing module, run on Node's WebCrypto.
import { generateDeviceKey, publicJwk, signDecision } from '../../libs/device-app/public/signing.js';

describe('device web app (all-in-one)', () => {
  let stack: Stack;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let api: ApiClient;
  let origin: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    stack = await startStack({ mode: 'all-in-one', databaseUrl: db.url, name: 'device-app' });
    api = apiClient(stack.baseUrl);
    origin = new URL(stack.baseUrl).origin;
  });
  afterAll(async () => {
    await stack?.stop();
    await db?.drop();
  });

  it('serves the app at /app/ with a strict CSP, unframeable; / redirects there; unknown files are 404 with a detail', async () => {
    const page = await fetch(`${origin}/app/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const html = await page.text();
    expect(html).toContain('<script type="module" src="/app/app.js">');
    for (const file of ['app.js', 'api.js', 'signing.js', 'links.js']) {
      const res = await fetch(`${origin}/app/${file}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/javascript/);
    }
    expect((await fetch(`${origin}/app/style.css`)).headers.get('content-type')).toMatch(/^text\/css/);
    expect((await fetch(`${origin}/app`)).headers.get('content-type')).toMatch(/^text\/html/);
    const root = await fetch(`${origin}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/app/');
    const missing = await fetch(`${origin}/app/..%2Fpackage.json`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).detail).toMatch(/No file/);
  });

  it("approves with the app's WebCrypto signature once the device registered its key; an unsigned approval is refused", async () => {
    const acct = await api.newAccount();
    const pair = await generateDeviceKey();
    const set = await api.call('PUT', '/device/public-key', {
      body: { public_key: await publicJwk(pair.publicKey) },
      headers: { 'x-device-id': acct.device_id },
    });
    expect(set.status).toBe(200);
    const created = (
      await api
        .agent(acct.api_key)
        .post('/actions', { action_type: 'purchase', title: 'Signed in the app', amount: 12 })
    ).body;
    const device = api.device(acct.device_id);

    const unsigned = await device.post(`/actions/${created.id}/approve`, {});
    expect(unsigned.status).toBe(403);
    const signed = await device.post(
      `/actions/${created.id}/approve`,
      await signDecision(pair.privateKey, { requestId: created.id, decision: 'approve', contentHash: null }),
    );
    expect(signed.status).toBe(200);
    expect(signed.body).toMatchObject({ status: 'approved', resolved_by: 'biometric' });
  });
});
