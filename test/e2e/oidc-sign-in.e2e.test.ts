import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { inviteAndJoin } from '../harness/members.js';
import { browse, CookieJar, startOidcProvider, type TestOidcProvider } from '../harness/oidc-provider.js';
import { startStack, type Stack } from '../harness/stack.js';
import { freePort } from '../harness/free-port.js';

// Sign-in with the company's OpenID Connect provider: a real provider (oidc-provider) on loopback, the services as
// processes over NATS (the identity service's calls to the provider relayed by the vault executor), the whole flow
// driven over HTTP as a browser does it, and each check of the ID token refused with its own message.
const { natsUrl } = inject('infra');

describe.skipIf(!natsUrl)(`sign-in with an OpenID provider (processes over NATS${natsUrl ? '' : '; skipped'})`, () => {
  let stack: Stack;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let idp: TestOidcProvider;
  let api: ApiClient;
  let origin: string;
  let owner: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    idp = await startOidcProvider({
      clientId: 'agent-auth',
      clientSecret: 'a-client-secret-of-the-test',
      redirectUri: `${origin}/auth/oidc/callback`,
      accounts: {
        dana: { email: 'Dana@Example.com', email_verified: true },
        eve: { email: 'eve@example.com', email_verified: false },
        stranger: { email: 'stranger@example.com', email_verified: true },
      },
    });
    stack = await startStack({
      mode: 'processes',
      databaseUrl: db.url,
      natsUrl,
      name: 'oidc',
      env: {
        PORT: String(port),
        OIDC_ISSUER: idp.issuer,
        OIDC_CLIENT_ID: 'agent-auth',
        OIDC_CLIENT_SECRET: 'a-client-secret-of-the-test',
        OIDC_PROVIDER_NAME: 'Example SSO',
      },
    });
    api = apiClient(stack.baseUrl);
    owner = (await api.newAccount()).device_id;
    await inviteAndJoin(api, owner, { name: 'Dana', role: 'approver', email: 'dana@example.com' });
    // Eve is a member too, but her provider has not verified her address.
    await inviteAndJoin(api, owner, { name: 'Eve', role: 'auditor', email: 'eve@example.com' });
  });
  afterAll(async () => {
    await stack?.stop();
    await idp?.stop();
    await db?.drop();
  });

  const start = `/auth/oidc/start?device_name=${encodeURIComponent("Dana's laptop")}`;
  const redeem = (ticket: string) =>
    fetch(`${origin}/auth/oidc/redeem`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ticket }),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));

  it('offers the sign-in under the configured name', async () => {
    const res = await fetch(`${origin}/auth/oidc`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ enabled: true, provider_name: 'Example SSO' });
  });

  it("binds a verified email to its member: a new device of Dana's, its id only in the redeemed answer", async () => {
    const first = await fetch(`${origin}${start}`, { redirect: 'manual' });
    expect(first.status).toBe(302);
    const toProvider = new URL(first.headers.get('location')!);
    expect(toProvider.origin).toBe(idp.issuer);
    expect(toProvider.searchParams.get('code_challenge_method')).toBe('S256');
    expect(toProvider.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(toProvider.searchParams.get('nonce')).toBeTruthy();
    expect(toProvider.searchParams.get('state')).toMatch(/^ass_/);
    expect(toProvider.searchParams.get('redirect_uri')).toBe(`${origin}/auth/oidc/callback`);
    expect(first.headers.get('set-cookie')).toMatch(
      /^aa_sign_in=asb_[\w-]+; Path=\/auth\/oidc; Max-Age=600; HttpOnly; SameSite=Lax/,
    );

    const end = await browse({ start: `${origin}${start}`, login: 'dana' });
    expect(end.url.pathname).toBe('/app/');
    expect(end.fragment?.get('error'), end.fragment?.toString()).toBeNull();
    const ticket = end.fragment!.get('ticket')!;
    expect(ticket).toMatch(/^ast_/);
    const redeemed = await redeem(ticket);
    expect(redeemed.status, JSON.stringify(redeemed.body)).toBe(200);
    expect(Object.keys(redeemed.body)).toEqual(['device_id']);
    const device = api.device(redeemed.body.device_id);
    const members = (await device.get('/members')).body.members;
    const dana = members.find((m: { name: string }) => m.name === 'Dana');
    expect(dana).toMatchObject({ role: 'approver', devices: 2 });
    // The device is Dana's: an approver's device may answer requests and may not manage the account.
    expect((await device.get('/pending')).status).toBe(200);
    expect((await device.get('/rules')).body.code).toBe('role_forbidden');
    // A ticket is redeemed once.
    expect(await redeem(ticket)).toMatchObject({ status: 401, body: { code: 'sign_in_ticket_invalid' } });
    // The audit trail names the sign-in; the device id is nowhere but in its one answer.
    const audit = JSON.stringify((await api.device(owner).get('/audit')).body);
    expect(audit).toContain('member_signed_in');
    expect(audit).toContain(dana.member_id);
    expect(stack.logs()).not.toContain(redeemed.body.device_id);
    expect(stack.logs()).not.toContain(ticket);
    // The identity service reached the provider (discovery, keys, token) through the vault executor's relay.
    expect(idp.served).toEqual(expect.arrayContaining(['/.well-known/openid-configuration', '/jwks', '/token']));
  });

  it('refuses an unverified email, and an email no member has, with a clear message', async () => {
    const eve = await browse({ start: `${origin}${start}`, login: 'eve' });
    expect(eve.fragment?.get('error')).toBe(
      'Sign-in refused: the provider has not verified the email address eve@example.com',
    );
    expect(eve.fragment?.get('ticket')).toBeNull();

    const stranger = await browse({ start: `${origin}${start}`, login: 'stranger' });
    const refused = await redeem(stranger.fragment!.get('ticket')!);
    expect(refused).toEqual({
      status: 409,
      body: {
        code: 'sign_in_no_member',
        detail: 'No member has the email stranger@example.com: ask an owner or admin to invite you with it',
      },
    });
  });

  const refusals: Array<
    [string, (c: Record<string, unknown>) => { claims: Record<string, unknown>; foreignKey?: boolean }, string]
  > = [
    ['a wrong audience', (c) => ({ claims: { ...c, aud: 'another-client' } }), 'its audience is not OIDC_CLIENT_ID'],
    ['a wrong issuer', (c) => ({ claims: { ...c, iss: 'http://127.0.0.1:1/' } }), 'issued by another provider'],
    ['a wrong nonce', (c) => ({ claims: { ...c, nonce: 'not-this-sign-in' } }), 'its nonce differs'],
    ['a signature of another key', (c) => ({ claims: c, foreignKey: true }), 'signature does not verify'],
  ];
  for (const [what, craft, words] of refusals)
    it(`refuses an ID token with ${what}`, async () => {
      idp.tamper(craft);
      try {
        const end = await browse({ start: `${origin}${start}`, login: 'dana' });
        expect(end.fragment?.get('ticket')).toBeNull();
        expect(end.fragment?.get('error')).toContain('Sign-in refused: ');
        expect(end.fragment?.get('error')).toContain(words);
      } finally {
        idp.tamper(undefined);
      }
    });

  it('reaches the provider only through the vault executor: none running, the token request fails; one back, it works', async () => {
    for (const executor of stack.processes('vault-executor')) {
      const exited = new Promise((resolve) => executor.once('exit', resolve));
      executor.kill('SIGTERM');
      await exited;
    }
    // The provider's documents are cached since the first sign-in; the code's redemption needs the relay.
    const cut = await browse({ start: `${origin}${start}`, login: 'dana' });
    expect(cut.fragment?.get('error')).toBe(
      'The identity provider did not answer as it should: the outbound relay (the vault executor) did not answer',
    );
    await stack.addProcess('vault-executor');
    const back = await browse({ start: `${origin}${start}`, login: 'dana' });
    expect((await redeem(back.fragment!.get('ticket')!)).status).toBe(200);
  });

  it('counts every sign-in route against the per-IP budget of unauthenticated requests', async () => {
    const limited = await stack.addGateway({ PORT: '0', RATE_LIMIT_IP: '3', TRUST_PROXY: '127.0.0.1' });
    const from = { 'x-forwarded-for': '203.0.113.77' };
    const gatewayOrigin = new URL(limited).origin;
    const statuses = [];
    for (const path of ['/auth/oidc', '/auth/oidc/start', '/auth/oidc/callback?state=x', '/auth/oidc/start'])
      statuses.push((await fetch(`${gatewayOrigin}${path}`, { headers: from, redirect: 'manual' })).status);
    const redeemed = await fetch(`${gatewayOrigin}/auth/oidc/redeem`, {
      method: 'POST',
      headers: { ...from, 'content-type': 'application/json' },
      body: JSON.stringify({ ticket: 'ast_x' }),
    });
    expect([...statuses, redeemed.status]).toEqual([200, 302, 303, 429, 429]);
    expect(redeemed.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('finishes a sign-in once, only in the browser that started it, and refuses a made-up state', async () => {
    // The provider's answer is taken to another browser (no binding cookie): refused, and the state is spent.
    const jar = new CookieJar();
    const atCallback = await browse({
      start: `${origin}${start}`,
      login: 'dana',
      jar,
      stopAt: (url) => url.pathname === '/auth/oidc/callback',
    });
    const elsewhere = await browse({ start: atCallback.url.toString(), login: 'dana' });
    expect(elsewhere.fragment?.get('error')).toBe(
      'Sign-in refused: it was started in another browser: sign in again from the device app',
    );
    const again = await browse({ start: atCallback.url.toString(), login: 'dana', jar });
    expect(again.fragment?.get('error')).toContain('unknown, used or expired');

    const madeUp = await browse({ start: `${origin}/auth/oidc/callback?code=x&state=ass_nothing`, login: 'dana' });
    expect(madeUp.fragment?.get('error')).toContain('unknown, used or expired');
  });
});
