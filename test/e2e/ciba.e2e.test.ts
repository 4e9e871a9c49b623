// OpenID Connect CIBA with rich authorization requests end to end, with a real OpenID client library
// (openid-client): discovery, the backchannel request as client_secret_basic and client_secret_post, the poll
// flow (approve, deny, expiry, slow_down, a request a rule settles at once), the ping flow, the ID token checked by
// openid-client itself (claims, and its signature against the JWKS with its non-repudiation checks), the access
// token verified with jose against the same JWKS, and the CIBA and OAuth error answers, never a 5xx.
import { createHash } from 'node:crypto';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';
import { startUpstream, type Upstream } from '../harness/upstream.js';
import { createTestDatabase } from '../infra/database.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'all-in-one', skip: false },
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
];

const CIBA_GRANT = 'urn:openid:params:grant-type:ciba';
const LATENCY_RUNS = Number(process.env.CIBA_LATENCY_RUNS ?? 50);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One agent_action entry as a form carries it. */
const detailsOf = (over: Record<string, unknown> = {}) =>
  JSON.stringify([
    {
      type: 'agent_action',
      action_type: 'communication',
      title: 'Send the quarterly report to the board',
      description: 'Email with the PDF attached',
      recipient: 'board@example.com',
      risk_level: 'medium',
      metadata: { document: 'q3.pdf' },
      ...over,
    },
  ]);

interface Client {
  agentId: string;
  apiKey: string;
}

/** A raw form POST to an OAuth endpoint: status, JSON body, headers. */
async function postForm(url: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* kept as text: the assertion shows it */
  }
  return { status: res.status, body, headers: res.headers };
}

const basic = (c: Client) =>
  `Basic ${Buffer.from(`${encodeURIComponent(c.agentId)}:${encodeURIComponent(c.apiKey)}`).toString('base64')}`;

/** The OAuth error a promise of openid-client rejected with (its ResponseBodyError's `error`). */
async function oauthErrorOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof oidc.ResponseBodyError) return err.error;
    throw err;
  }
  throw new Error('expected an OAuth error');
}

const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const p99 = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
};

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`OpenID Connect CIBA (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let acct: Awaited<ReturnType<ApiClient['newAccount']>>;
    let origin: string;
    let agent: Client;
    let other: Client;
    let pinger: Upstream;
    /** Resolvers waiting for a ping, by auth_req_id. */
    const pingWaiters = new Map<string, (ping: { token: string }) => void>();

    const device = () => api.device(acct.device_id);

    /** An openid-client configuration from discovery, verifying ID token signatures against the JWKS. */
    const configOf = async (client: Client, method: 'basic' | 'post') => {
      const auth = method === 'basic' ? oidc.ClientSecretBasic(client.apiKey) : oidc.ClientSecretPost(client.apiKey);
      const config = await oidc.discovery(new URL(origin), client.agentId, client.apiKey, auth, {
        execute: [oidc.allowInsecureRequests],
      });
      oidc.enableNonRepudiationChecks(config);
      return config;
    };

    const actionIdOf = async (authReqId: string) =>
      (
        await db.sql<Array<{ action_id: string }>>`
        select action_id from actions.ciba_requests where auth_req_id = ${authReqId}`
      )[0]!.action_id;

    const waitForPing = (authReqId: string) =>
      new Promise<{ token: string }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ping for ${authReqId}`)), 15_000);
        pingWaiters.set(authReqId, (ping) => {
          clearTimeout(timer);
          resolve(ping);
        });
      });

    beforeAll(async () => {
      db = await createTestDatabase();
      pinger = await startUpstream({
        handler: (req, res) => {
          res.writeHead(204).end();
          if (!req.url.startsWith('/ciba/ping')) return;
          const { auth_req_id } = JSON.parse(req.body) as { auth_req_id: string };
          const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
          pingWaiters.get(auth_req_id)?.({ token });
        },
      });
      stack = await startStack({
        mode,
        databaseUrl: db.url,
        natsUrl,
        name: 'ciba',
        // The IP budget differs from the agents', so an answer's rate-limit headers say which one it counted against.
        env: { SWEEP_INTERVAL_MS: '200', WEBHOOK_RETRY_SCHEDULE: '0.3,0.3,0.3', RATE_LIMIT_IP: '9999' },
      });
      api = apiClient(stack.baseUrl);
      acct = await api.newAccount();
      origin = new URL(stack.baseUrl).origin;
      agent = { agentId: acct.agent_id, apiKey: acct.api_key };
      const second = await device().post('/agents', { name: 'Second agent' });
      other = { agentId: second.body.agent_id, apiKey: second.body.api_key };
    }, 180_000);
    afterAll(async () => {
      await stack?.stop();
      await pinger?.close();
      await db?.drop();
    });

    it('publishes the OpenID configuration of a CIBA provider at the host root, outside every rate limit', async () => {
      const res = await fetch(`${origin}/.well-known/openid-configuration`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
      const doc = (await res.json()) as Record<string, unknown>;
      expect(doc).toMatchObject({
        issuer: origin,
        backchannel_authentication_endpoint: `${origin}/oauth/bc-authorize`,
        token_endpoint: `${origin}/oauth/token`,
        jwks_uri: `${origin}/.well-known/jwks.json`,
        backchannel_token_delivery_modes_supported: ['poll', 'ping'],
        backchannel_user_code_parameter_supported: false,
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        id_token_signing_alg_values_supported: ['ES256'],
        authorization_details_types_supported: ['agent_action'],
      });
      expect(doc.grant_types_supported).toContain(CIBA_GRANT);
      expect(doc).not.toHaveProperty('backchannel_authentication_request_signing_alg_values_supported');
      // openid-client's own discovery accepts it (its issuer check included).
      const config = await configOf(agent, 'basic');
      expect(config.serverMetadata().issuer).toBe(origin);
    });

    it('poll flow: the request waits in /pending with its binding message; once approved openid-client gets tokens it verifies', async () => {
      const config = await configOf(agent, 'basic');
      const started = await oidc.initiateBackchannelAuthentication(config, {
        scope: 'openid',
        binding_message: 'Q3-7F2K',
        requested_expiry: '120',
        authorization_details: detailsOf(),
      });
      expect(started).toMatchObject({ expires_in: 120, interval: 5 });
      expect(started.auth_req_id).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const actionId = await actionIdOf(started.auth_req_id);
      expect(started.auth_req_id).not.toContain(actionId);

      const pending = await device().get('/pending');
      const item = pending.body.requests.find((r: { id: string }) => r.id === actionId);
      expect(item).toMatchObject({
        title: 'Send the quarterly report to the board',
        agent_id: agent.agentId,
        metadata: { binding_message: 'Q3-7F2K', document: 'q3.pdf' },
      });
      const approved = await device().post(`/actions/${actionId}/approve`, {});
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);

      const tokens = await oidc.pollBackchannelAuthenticationGrant(config, started);
      expect(tokens.token_type).toBe('bearer');
      expect(tokens.expires_in).toBeGreaterThan(0);
      // openid-client checked iss, aud, exp, iat, sub and the ES256 signature against jwks_uri; the claims it read:
      const claims = tokens.claims()!;
      expect(claims).toMatchObject({
        iss: origin,
        aud: agent.agentId,
        sub: acct.account_id,
        'urn:openid:params:jwt:claim:auth_req_id': started.auth_req_id,
      });
      expect(claims.auth_time).toBe(Math.floor(Date.parse(approved.body.resolved_at) / 1000));
      const digest = createHash('sha256').update(tokens.access_token).digest();
      expect(claims.at_hash).toBe(digest.subarray(0, 16).toString('base64url'));

      // The access token: an ES256 JWT a resource server verifies against the same JWKS.
      const jwks = createRemoteJWKSet(new URL(`${origin}/.well-known/jwks.json`));
      const { payload } = await jwtVerify(tokens.access_token, jwks, {
        issuer: origin,
        audience: agent.agentId,
        algorithms: ['ES256'],
        typ: 'at+jwt',
      });
      const detail = {
        type: 'agent_action',
        action_type: 'communication',
        title: 'Send the quarterly report to the board',
        description: 'Email with the PDF attached',
        recipient: 'board@example.com',
        risk_level: 'medium',
        metadata: { document: 'q3.pdf' },
        action_id: actionId,
      };
      expect(payload).toMatchObject({ sub: acct.account_id, action_id: actionId, authorization_details: [detail] });
      expect(tokens.authorization_details).toEqual([detail]);
      expect(decodeProtectedHeader(tokens.id_token!).alg).toBe('ES256');

      // Once per auth_req_id.
      expect(
        await oauthErrorOf(oidc.genericGrantRequest(config, CIBA_GRANT, { auth_req_id: started.auth_req_id })),
      ).toBe('invalid_grant');
      // An action request in every other respect: its creation's audit entry names the channel, it has a receipt.
      const [created] = await db.sql<Array<{ detail: { channel?: string } }>>`
        select detail from actions.audit_events where request_id = ${actionId} and event = 'created'`;
      expect(created!.detail.channel).toBe('ciba');
      const view = await api.agent(agent.apiKey).get(`/actions/${actionId}`);
      expect(view.body).toMatchObject({ status: 'approved' });
      expect(view.body.receipt).toEqual(expect.any(String));
    }, 30_000);

    it('poll flow: a denied request answers access_denied (client_secret_post)', async () => {
      const config = await configOf(agent, 'post');
      const started = await oidc.initiateBackchannelAuthentication(config, {
        scope: 'openid email',
        authorization_details: detailsOf({ title: 'Delete the shared drive' }),
      });
      expect(started.expires_in).toBe(300);
      const denied = await device().post(`/actions/${await actionIdOf(started.auth_req_id)}/deny`, { reason: 'no' });
      expect(denied.status).toBe(200);
      expect(await oauthErrorOf(oidc.pollBackchannelAuthenticationGrant(config, started))).toBe('access_denied');
    }, 30_000);

    it('poll flow: a request that expires unanswered answers expired_token', async () => {
      const config = await configOf(agent, 'basic');
      const started = await oidc.initiateBackchannelAuthentication(config, {
        scope: 'openid',
        requested_expiry: '30',
        authorization_details: detailsOf({ title: 'Book a table for six' }),
      });
      expect(started.expires_in).toBe(30);
      // 30 s is the shortest expiry a client may ask for; the test moves it to now rather than wait.
      await db.sql`update actions.requests set expires_at = now() where id = ${await actionIdOf(started.auth_req_id)}`;
      expect(await oauthErrorOf(oidc.pollBackchannelAuthenticationGrant(config, started))).toBe('expired_token');
    }, 30_000);

    it('answers slow_down to a client polling faster than the interval, and grows its interval by 5 s', async () => {
      const config = await configOf(agent, 'basic');
      const started = await oidc.initiateBackchannelAuthentication(config, {
        scope: 'openid',
        authorization_details: detailsOf({ title: 'Post on the team channel' }),
      });
      const poll = () =>
        postForm(
          `${origin}/oauth/token`,
          { grant_type: CIBA_GRANT, auth_req_id: started.auth_req_id },
          {
            authorization: basic(agent),
          },
        );
      const first = await poll();
      expect(first.status).toBe(400);
      expect(first.body.error).toBe('authorization_pending');
      expect(first.headers.get('cache-control')).toBe('no-store');
      const second = await poll();
      expect(second.status).toBe(400);
      expect(second.body).toMatchObject({ error: 'slow_down', error_description: expect.stringContaining('10 s') });
      const [row] = await db.sql<Array<{ interval_seconds: number }>>`
        select interval_seconds from actions.ciba_requests where auth_req_id = ${started.auth_req_id}`;
      expect(row!.interval_seconds).toBe(10);
      // openid-client keeps polling through slow_down (its interval grown too) until the answer comes.
      const approve = sleep(1_000).then(async () =>
        device().post(`/actions/${await actionIdOf(started.auth_req_id)}/approve`, {}),
      );
      const tokens = await oidc.pollBackchannelAuthenticationGrant(config, { ...started, interval: 1 });
      await approve;
      expect(tokens.claims()?.sub).toBe(acct.account_id);
    }, 60_000);

    it('a request a rule settles at once is answered at the first poll', async () => {
      const rule = await device().post('/rules', {
        name: 'purchases',
        decision: 'auto_approve',
        action_type: 'purchase',
      });
      expect(rule.status, JSON.stringify(rule.body)).toBe(200);
      const config = await configOf(agent, 'basic');
      const started = await oidc.initiateBackchannelAuthentication(config, {
        scope: 'openid',
        authorization_details: detailsOf({
          action_type: 'purchase',
          title: 'Buy a book',
          amount: 12.5,
          currency: 'EUR',
        }),
      });
      const polls = { n: 0 };
      config[oidc.customFetch] = (url, options) => {
        if (url.endsWith('/oauth/token')) polls.n += 1;
        return fetch(url, options as RequestInit);
      };
      const tokens = await oidc.pollBackchannelAuthenticationGrant(config, started);
      expect(polls.n).toBe(1);
      expect(tokens.authorization_details).toEqual([
        expect.objectContaining({ action_type: 'purchase', amount: 12.5, currency: 'EUR' }),
      ]);
      const view = await api.agent(agent.apiKey).get(`/actions/${await actionIdOf(started.auth_req_id)}`);
      expect(view.body).toMatchObject({ status: 'approved', rule_applied: 'purchases' });
      await device().delete(`/rules/${rule.body.rule_id}`);
    }, 30_000);

    it('ping flow: the holder registers the endpoint; the answer pings it with the bearer token, then the client exchanges', async () => {
      const endpoint = `${pinger.origin}/ciba/ping`;
      const set = await api.call('PATCH', `/agents/${agent.agentId}`, {
        body: { backchannel_client_notification_endpoint: endpoint },
        headers: { 'x-device-id': acct.device_id },
      });
      expect(set.status, JSON.stringify(set.body)).toBe(200);
      expect(set.body).toMatchObject({
        client_id: agent.agentId,
        backchannel_token_delivery_modes: ['poll', 'ping'],
        backchannel_client_notification_endpoint: endpoint,
      });
      expect((await device().get(`/agents/${agent.agentId}/ciba-client`)).body).toEqual(set.body);

      const config = await configOf(agent, 'basic');
      for (const outcome of ['approve', 'deny'] as const) {
        const started = await oidc.initiateBackchannelAuthentication(config, {
          scope: 'openid',
          client_notification_token: `tok-${outcome}-8d1f`,
          authorization_details: detailsOf({ title: `Ping me (${outcome})` }),
        });
        const pinged = waitForPing(started.auth_req_id);
        const decided = await device().post(`/actions/${await actionIdOf(started.auth_req_id)}/${outcome}`, {});
        expect(decided.status).toBe(200);
        expect((await pinged).token).toBe(`tok-${outcome}-8d1f`);
        const exchange = oidc.genericGrantRequest(config, CIBA_GRANT, { auth_req_id: started.auth_req_id });
        if (outcome === 'approve') expect((await exchange).claims()?.aud).toBe(agent.agentId);
        else expect(await oauthErrorOf(exchange)).toBe('access_denied');
      }
    }, 60_000);

    it(`ping flow: time from the holder's approve to the client's token over ${LATENCY_RUNS} requests`, async () => {
      const config = await configOf(agent, 'basic');
      const times: number[] = [];
      const parts = { approve: [] as number[], ping: [] as number[], token: [] as number[] };
      const set = await api.call('PATCH', `/agents/${agent.agentId}`, {
        body: { backchannel_client_notification_endpoint: `${pinger.origin}/ciba/ping` },
        headers: { 'x-device-id': acct.device_id },
      });
      expect(set.status).toBe(200);
      for (let i = 0; i < LATENCY_RUNS; i++) {
        const started = await oidc.initiateBackchannelAuthentication(config, {
          scope: 'openid',
          client_notification_token: `tok-${i}`,
          authorization_details: detailsOf({ title: `Latency ${i}` }),
        });
        const actionId = await actionIdOf(started.auth_req_id);
        const pinged = waitForPing(started.auth_req_id);
        const t0 = performance.now();
        await device().post(`/actions/${actionId}/approve`, {});
        const t1 = performance.now();
        await pinged;
        const t2 = performance.now();
        const tokens = await oidc.genericGrantRequest(config, CIBA_GRANT, { auth_req_id: started.auth_req_id });
        const t3 = performance.now();
        times.push(t3 - t0);
        parts.approve.push(t1 - t0);
        parts.ping.push(t2 - t1);
        parts.token.push(t3 - t2);
        expect(tokens.access_token).toBeTruthy();
      }
      const sorted = [...times].sort((a, b) => a - b);
      console.info(
        `CIBA ping (${mode}): approve → ping → token over ${times.length} requests: ` +
          `p50 ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} ms, p99 ${p99(times).toFixed(1)} ms ` +
          `(goal under 100 ms), max ${sorted[sorted.length - 1]!.toFixed(1)} ms; p50/p99 of its parts: ` +
          Object.entries(parts)
            .map(([part, ms]) => `${part} ${p50(ms).toFixed(1)}/${p99(ms).toFixed(1)} ms`)
            .join(', '),
      );
    }, 120_000);

    it('refuses as the CIBA and OAuth specifications say, never with a 5xx', async () => {
      const bc = `${origin}/oauth/bc-authorize`;
      const good = { scope: 'openid', authorization_details: detailsOf() };
      const asAgent = { authorization: basic(agent) };
      const cases: Array<{
        name: string;
        url: string;
        form: Record<string, string>;
        headers?: Record<string, string>;
        status: number;
        error: string;
      }> = [
        {
          name: 'wrong secret',
          url: bc,
          form: good,
          headers: { authorization: basic({ ...agent, apiKey: 'aa_wrong' }) },
          status: 401,
          error: 'invalid_client',
        },
        {
          name: "another agent's secret",
          url: bc,
          form: good,
          headers: { authorization: basic({ ...agent, apiKey: other.apiKey }) },
          status: 401,
          error: 'invalid_client',
        },
        {
          name: 'unknown client',
          url: bc,
          form: { ...good, client_id: 'agt_nobody', client_secret: 'aa_nothing' },
          status: 401,
          error: 'invalid_client',
        },
        { name: 'no credentials', url: bc, form: good, status: 401, error: 'invalid_client' },
        {
          name: 'no openid scope',
          url: bc,
          form: { ...good, scope: 'email' },
          headers: asAgent,
          status: 400,
          error: 'invalid_scope',
        },
        {
          name: 'no scope',
          url: bc,
          form: { authorization_details: detailsOf() },
          headers: asAgent,
          status: 400,
          error: 'invalid_scope',
        },
        {
          name: 'details not JSON',
          url: bc,
          form: { ...good, authorization_details: '[{' },
          headers: asAgent,
          status: 400,
          error: 'invalid_authorization_details',
        },
        {
          name: 'details missing',
          url: bc,
          form: { scope: 'openid' },
          headers: asAgent,
          status: 400,
          error: 'invalid_authorization_details',
        },
        {
          name: 'details of another type',
          url: bc,
          form: { ...good, authorization_details: detailsOf({ type: 'payment_initiation' }) },
          headers: asAgent,
          status: 400,
          error: 'invalid_authorization_details',
        },
        {
          name: 'details not an array',
          url: bc,
          form: { ...good, authorization_details: '{"type":"agent_action"}' },
          headers: asAgent,
          status: 400,
          error: 'invalid_authorization_details',
        },
        {
          name: 'two entries',
          url: bc,
          form: {
            ...good,
            authorization_details: JSON.stringify([...JSON.parse(detailsOf()), ...JSON.parse(detailsOf())]),
          },
          headers: asAgent,
          status: 400,
          error: 'invalid_authorization_details',
        },
        {
          name: 'a title too long',
          url: bc,
          form: { ...good, authorization_details: detailsOf({ title: 'x'.repeat(201) }) },
          headers: asAgent,
          status: 400,
          error: 'invalid_authorization_details',
        },
        {
          name: 'oversized details',
          url: bc,
          form: { ...good, authorization_details: detailsOf({ metadata: { blob: 'x'.repeat(13_000) } }) },
          headers: asAgent,
          status: 400,
          error: 'invalid_authorization_details',
        },
        {
          name: 'metadata over its limit',
          url: bc,
          form: { ...good, authorization_details: detailsOf({ metadata: { blob: 'x'.repeat(9_000) } }) },
          headers: asAgent,
          status: 400,
          error: 'invalid_authorization_details',
        },
        {
          name: 'expiry too short',
          url: bc,
          form: { ...good, requested_expiry: '29' },
          headers: asAgent,
          status: 400,
          error: 'invalid_request',
        },
        {
          name: 'expiry too long',
          url: bc,
          form: { ...good, requested_expiry: '3601' },
          headers: asAgent,
          status: 400,
          error: 'invalid_request',
        },
        {
          name: 'expiry not a number',
          url: bc,
          form: { ...good, requested_expiry: '1e3' },
          headers: asAgent,
          status: 400,
          error: 'invalid_request',
        },
        {
          name: 'binding message too long',
          url: bc,
          form: { ...good, binding_message: 'b'.repeat(201) },
          headers: asAgent,
          status: 400,
          error: 'invalid_request',
        },
        {
          name: 'ping without an endpoint',
          url: bc,
          form: { ...good, client_notification_token: 'tok' },
          headers: { authorization: basic(other) },
          status: 400,
          error: 'invalid_request',
        },
        {
          name: 'a signed request',
          url: bc,
          form: { ...good, request: 'eyJ.eyJ.sig' },
          headers: asAgent,
          status: 400,
          error: 'invalid_request',
        },
        {
          name: 'unknown auth_req_id',
          url: `${origin}/oauth/token`,
          form: { grant_type: CIBA_GRANT, auth_req_id: 'nope' },
          headers: asAgent,
          status: 400,
          error: 'invalid_grant',
        },
        {
          name: 'no auth_req_id',
          url: `${origin}/oauth/token`,
          form: { grant_type: CIBA_GRANT },
          headers: asAgent,
          status: 400,
          error: 'invalid_request',
        },
        {
          name: 'token with a wrong secret',
          url: `${origin}/oauth/token`,
          form: { grant_type: CIBA_GRANT, auth_req_id: 'x', client_id: agent.agentId, client_secret: 'aa_wrong' },
          status: 401,
          error: 'invalid_client',
        },
      ];
      for (const c of cases) {
        const res = await postForm(c.url, c.form, c.headers);
        expect({ name: c.name, status: res.status, error: res.body.error }).toEqual({
          name: c.name,
          status: c.status,
          error: c.error,
        });
        expect(res.body.error_description, c.name).toEqual(expect.any(String));
      }
      // Another client's auth_req_id is no grant of this one.
      const mine = await postForm(bc, good, asAgent);
      expect(mine.status).toBe(200);
      const theirs = await postForm(
        `${origin}/oauth/token`,
        { grant_type: CIBA_GRANT, auth_req_id: mine.body.auth_req_id },
        { authorization: basic(other) },
      );
      expect(theirs.status).toBe(400);
      expect(theirs.body.error).toBe('invalid_grant');
      // Counted against the agent's own budget, not the address's.
      expect(mine.headers.get('x-ratelimit-limit')).toBe('10000');
      // Not a form at all.
      const json = await fetch(bc, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(json.status).toBeLessThan(500);

      // The ping endpoint: https only, not another account's agent.
      for (const endpoint of [
        'ftp://example.com/x',
        'http://example.com/ping',
        'https://example.com/p#frag',
        'not a url',
      ]) {
        const r = await api.call('PATCH', `/agents/${agent.agentId}`, {
          body: { backchannel_client_notification_endpoint: endpoint },
          headers: { 'x-device-id': acct.device_id },
        });
        expect(r.status, endpoint).toBe(400);
        expect(r.body.code, endpoint).toBe('notification_endpoint_not_https');
      }
      const stranger = await api.newAccount();
      const foreign = await api.call('PATCH', `/agents/${agent.agentId}`, {
        body: { backchannel_client_notification_endpoint: null },
        headers: { 'x-device-id': stranger.device_id },
      });
      expect(foreign.status).toBe(404);
    }, 60_000);
  });
}
