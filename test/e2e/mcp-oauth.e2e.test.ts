// OAuth 2.1 for /mcp end to end, with the official SDK's own OAuth client support: discovery from the 401, dynamic
// registration, the holder's consent on the device app's API, the code exchange with PKCE, refresh with rotation and
// reuse detection, revocation on every gateway, the resource (audience) binding, expiry, client ID metadata
// documents, and the RFCs' error answers.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auth, exchangeAuthorization, startAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  OAuthMetadataSchema,
  OAuthProtectedResourceMetadataSchema,
  OAuthTokensSchema,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { apiClient, type ApiClient } from '../harness/http.js';
import {
  consent,
  consentRequestOf,
  connectWithOAuth,
  type Holder,
  MemoryOAuthProvider,
} from '../harness/oauth-client.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';
import { createTestDatabase } from '../infra/database.js';
import { freePort } from '../harness/free-port.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'all-in-one', skip: false },
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
];

type ToolResult = { isError?: boolean; content: Array<{ text?: string }>; structuredContent?: any };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A raw JSON-RPC call to /mcp with a bearer token: the status and, on 401, the challenge. */
async function callMcp(mcpUrl: string, token: string) {
  const res = await fetch(mcpUrl, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  const text = await res.text();
  return { status: res.status, challenge: res.headers.get('www-authenticate'), body: text ? JSON.parse(text) : null };
}

/** POST /oauth/token with a form; the status and the JSON answer. */
async function token(origin: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(`${origin}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`OAuth 2.1 for /mcp (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let acct: Awaited<ReturnType<ApiClient['newAccount']>>;
    let holder: Holder;
    let origin: string;
    /** A second gateway process in processes mode (the first otherwise): a replica, with the same public URL. */
    let otherOrigin: string;
    /** Where /mcp is another resource: a gateway with another public URL, or the first by another host name. */
    let elsewhere: { mcpUrl: string; resource: string };

    beforeAll(async () => {
      db = await createTestDatabase();
      // Replicas behind one address share PUBLIC_BASE_URL, which names the resource their tokens are bound to.
      const port = mode === 'processes' ? await freePort() : 0;
      const publicUrl = `http://127.0.0.1:${port}/api/v1`;
      stack = await startStack({
        mode,
        databaseUrl: db.url,
        natsUrl,
        name: 'mcp-oauth',
        ...(mode === 'processes' && { env: { PORT: String(port), PUBLIC_BASE_URL: publicUrl } }),
      });
      api = apiClient(stack.baseUrl);
      acct = await api.newAccount();
      holder = { baseUrl: stack.baseUrl, deviceId: acct.device_id };
      origin = new URL(stack.baseUrl).origin;
      if (mode === 'processes') {
        otherOrigin = new URL(await stack.addGateway({ PORT: '0' })).origin;
        const other = await stack.addGateway({ PORT: '0', PUBLIC_BASE_URL: 'https://mcp.elsewhere.example/api/v1' });
        elsewhere = { mcpUrl: `${new URL(other).origin}/mcp`, resource: 'https://mcp.elsewhere.example' };
      } else {
        otherOrigin = origin;
        const byName = origin.replace('127.0.0.1', 'localhost');
        elsewhere = { mcpUrl: `${byName}/mcp`, resource: byName };
      }
    }, 180_000);
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    it('publishes the resource and authorization server metadata the SDK reads', async () => {
      for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
        const res = await fetch(`${origin}${path}`);
        expect(res.status).toBe(200);
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
        const prm = OAuthProtectedResourceMetadataSchema.parse(await res.json());
        expect(prm).toMatchObject({ resource: `${origin}/mcp`, authorization_servers: [origin] });
      }
      const as = OAuthMetadataSchema.parse(
        await (await fetch(`${origin}/.well-known/oauth-authorization-server`)).json(),
      );
      expect(as).toMatchObject({
        issuer: origin,
        authorization_endpoint: `${origin}/oauth/authorize`,
        token_endpoint: `${origin}/oauth/token`,
        registration_endpoint: `${origin}/oauth/register`,
        code_challenge_methods_supported: ['S256'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
      });
      expect((as as Record<string, unknown>).client_id_metadata_document_supported).toBe(true);
    });

    it('connects through the whole flow: registration, consent as a new agent, code with PKCE, tools as that agent', async () => {
      const { client, provider, redirect } = await connectWithOAuth({
        mcpUrl: `${origin}/mcp`,
        holder,
        agent: { agent_name: 'Claude connector' },
      });
      expect(redirect.origin + redirect.pathname).toBe('http://127.0.0.1:53682/callback');
      expect(redirect.searchParams.get('state')).toBe('state-of-the-e2e-client');
      expect(redirect.searchParams.get('iss')).toBe(origin);
      expect(provider.client?.client_id).toMatch(/^oac_/);
      expect(provider.saved).toMatchObject({ token_type: 'Bearer', scope: 'mcp' });
      expect(provider.saved!.access_token).toMatch(/^aat_/);
      expect(provider.saved!.refresh_token).toMatch(/^aar_/);

      const created = (await client.callTool({
        name: 'request_approval',
        arguments: { action_type: 'purchase', title: 'Buy a connector', amount: 5 },
      })) as ToolResult;
      expect(created.isError).toBeFalsy();
      const agents = await api.device(acct.device_id).get('/agents');
      const agent = (agents.body.agents as Array<{ agent_id: string; name: string }>).find(
        (a) => a.name === 'Claude connector',
      )!;
      expect(agent).toBeDefined();
      // The request is the new agent's: the default agent's key does not see it.
      expect((await api.agent(acct.api_key).get(`/actions/${created.structuredContent.id}`)).status).toBe(404);
      const connections = await api.device(acct.device_id).get('/oauth/connections');
      expect(connections.body.connections).toEqual([
        expect.objectContaining({ client_name: 'E2E MCP client', agent_id: agent.agent_id, resource: `${origin}/mcp` }),
      ]);
      await client.close();
    });

    it('lets the holder pick an existing agent, and shows the client and its redirect host before the answer', async () => {
      const provider = new MemoryOAuthProvider('http://localhost:7777/cb', { client_name: 'Cursor' });
      const transport = new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { authProvider: provider });
      await new Client({ name: 'x', version: '0' }).connect(transport).catch(() => undefined);
      const request = await consentRequestOf(provider.authorizationUrl!);
      const view = await api.device(acct.device_id).get(`/oauth/requests/${request}`);
      expect(view.status).toBe(200);
      expect(view.body).toMatchObject({
        client_name: 'Cursor',
        client_kind: 'registered',
        redirect_host: 'localhost:7777',
        resource: `${origin}/mcp`,
      });
      const answer = await consent(holder, { request, allow: true, agent_id: acct.agent_id });
      expect(answer.status).toBe(200);
      expect((await consent(holder, { request, allow: true, agent_id: acct.agent_id })).status).toBe(409);
      await transport.finishAuth(new URL(answer.body.redirect_to).searchParams.get('code')!);
      const client = new Client({ name: 'x', version: '0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { authProvider: provider }));
      const created = (await client.callTool({
        name: 'request_approval',
        arguments: { action_type: 'scheduling', title: 'Book a desk' },
      })) as ToolResult;
      // As the account's default agent: its own key reads the request.
      expect((await api.agent(acct.api_key).get(`/actions/${created.structuredContent.id}`)).status).toBe(200);
      await client.close();
    });

    it('refreshes with rotation; a rotated refresh token used again revokes the whole family', async () => {
      const { client, provider } = await connectWithOAuth({
        mcpUrl: `${origin}/mcp`,
        holder,
        agent: { agent_id: acct.agent_id },
      });
      await client.close();
      const first = provider.saved!;
      expect(await auth(provider, { serverUrl: `${origin}/mcp` })).toBe('AUTHORIZED');
      const second = provider.saved!;
      expect(second.refresh_token).not.toBe(first.refresh_token);
      expect(second.access_token).not.toBe(first.access_token);
      expect((await callMcp(`${origin}/mcp`, second.access_token)).status).toBe(200);

      const clientId = provider.client!.client_id;
      const replay = await token(origin, {
        grant_type: 'refresh_token',
        refresh_token: first.refresh_token!,
        client_id: clientId,
      });
      expect(replay.status).toBe(400);
      expect(replay.body).toEqual({ error: 'invalid_grant', error_description: expect.stringMatching(/revoked/) });
      expect(replay.headers.get('cache-control')).toBe('no-store');
      // The family is gone: the latest access token and refresh token with it, on every gateway.
      for (const at of [origin, otherOrigin]) {
        const after = await callMcp(`${at}/mcp`, second.access_token);
        expect(after.status).toBe(401);
        expect(after.body).toMatchObject({ code: 'access_token_invalid' });
      }
      const latest = await token(origin, {
        grant_type: 'refresh_token',
        refresh_token: second.refresh_token!,
        client_id: clientId,
      });
      expect(latest.body.error).toBe('invalid_grant');
    });

    it('a revocation on the device app takes effect at once on every gateway, cached tokens included', async () => {
      const { client, provider } = await connectWithOAuth({
        mcpUrl: `${origin}/mcp`,
        holder,
        agent: { agent_name: 'To be disconnected' },
      });
      await client.close();
      const access = provider.saved!.access_token;
      // Both gateways have verified (and cached) the token.
      for (const at of [origin, otherOrigin]) expect((await callMcp(`${at}/mcp`, access)).status).toBe(200);
      const listed = await api.device(acct.device_id).get('/oauth/connections');
      const connection = (
        listed.body.connections as Array<{ connection_id: string; client_name: string; agent_id: string }>
      ).find((c) => c.client_name === 'E2E MCP client' && c.agent_id !== acct.agent_id)!;
      const agents = (await api.device(acct.device_id).get('/agents')).body.agents as Array<{
        agent_id: string;
        name: string;
      }>;
      expect(agents.find((a) => a.agent_id === connection.agent_id)?.name).toBe('To be disconnected');
      const revoked = await api.device(acct.device_id).delete(`/oauth/connections/${connection.connection_id}`);
      expect(revoked.body).toEqual({ deleted: true, id: connection.connection_id });
      for (let i = 0; i < 20; i++) {
        const results = await Promise.all([origin, otherOrigin].map((at) => callMcp(`${at}/mcp`, access)));
        if (results.every((r) => r.status === 401)) break;
        await sleep(50);
      }
      for (const at of [origin, otherOrigin]) {
        const after = await callMcp(`${at}/mcp`, access);
        expect(after.status).toBe(401);
        expect(after.challenge).toMatch(/error="invalid_token"/);
      }
      expect((await api.device(acct.device_id).delete(`/oauth/connections/${connection.connection_id}`)).status).toBe(
        404,
      );
      const refresh = await token(origin, {
        grant_type: 'refresh_token',
        refresh_token: provider.saved!.refresh_token!,
        client_id: provider.client!.client_id,
      });
      expect(refresh.body.error).toBe('invalid_grant');
    });

    it('revoking the agent ends the connections that act as it', async () => {
      const { client, provider } = await connectWithOAuth({
        mcpUrl: `${origin}/mcp`,
        holder,
        agent: { agent_name: 'Short-lived agent' },
      });
      await client.close();
      const agents = (await api.device(acct.device_id).get('/agents')).body.agents as Array<{
        agent_id: string;
        name: string;
      }>;
      const agentId = agents.find((a) => a.name === 'Short-lived agent')!.agent_id;
      expect((await api.device(acct.device_id).delete(`/agents/${agentId}`)).status).toBe(200);
      let status = 0;
      for (let i = 0; i < 40 && status !== 401; i++) {
        status = (await callMcp(`${otherOrigin}/mcp`, provider.saved!.access_token)).status;
        if (status !== 401) await sleep(50);
      }
      expect(status).toBe(401);
    });

    it('binds tokens to the resource: a token for this origin is refused where /mcp is another resource', async () => {
      const { client, provider } = await connectWithOAuth({
        mcpUrl: `${origin}/mcp`,
        holder,
        agent: { agent_id: acct.agent_id },
      });
      await client.close();
      const refused = await callMcp(elsewhere.mcpUrl, provider.saved!.access_token);
      expect(refused.status).toBe(401);
      expect(refused.body).toMatchObject({ code: 'access_token_wrong_resource' });
      expect(refused.challenge).toContain(`resource_metadata="${elsewhere.resource}/.well-known/`);
      expect((await callMcp(`${otherOrigin}/mcp`, provider.saved!.access_token)).status).toBe(200);
      // Asking for another resource at the token endpoint is refused as RFC 8707 says.
      const wrongTarget = await token(origin, {
        grant_type: 'refresh_token',
        refresh_token: provider.saved!.refresh_token!,
        client_id: provider.client!.client_id,
        resource: 'https://other.example/mcp',
      });
      expect(wrongTarget.body.error).toBe('invalid_target');
    });

    it.runIf(mode === 'processes')(
      'guards against DNS rebinding: a Host naming a domain other than the public one is refused; an address is not',
      async () => {
        const { port } = new URL(otherOrigin);
        const post = (host: string) =>
          new Promise<number>((resolve, reject) => {
            const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
            const req = httpRequest(
              {
                host: '127.0.0.1',
                port,
                path: '/mcp',
                method: 'POST',
                headers: {
                  host,
                  'x-api-key': acct.api_key,
                  'content-type': 'application/json',
                  accept: 'application/json, text/event-stream',
                },
              },
              (res) => {
                res.resume();
                res.on('end', () => resolve(res.statusCode!));
              },
            );
            req.on('error', reject);
            req.end(body);
          });
        expect(await post('attacker.example')).toBe(403);
        expect(await post(`attacker.example:${port}`)).toBe(403);
        expect(await post(new URL(origin).host)).toBe(200);
        expect(await post(`127.0.0.1:${port}`)).toBe(200);
        expect(await post(`localhost:${port}`)).toBe(200);
      },
    );

    it('a code is single-use, needs the verifier, and a replayed code revokes what it gave', async () => {
      const provider = new MemoryOAuthProvider('http://127.0.0.1:53682/callback');
      const transport = new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { authProvider: provider });
      await new Client({ name: 'x', version: '0' }).connect(transport).catch(() => undefined);
      const request = await consentRequestOf(provider.authorizationUrl!);
      const answer = await consent(holder, { request, allow: true, agent_id: acct.agent_id });
      const code = new URL(answer.body.redirect_to).searchParams.get('code')!;
      const base = {
        grant_type: 'authorization_code',
        code,
        redirect_uri: provider.redirectUrl,
        client_id: provider.client!.client_id,
      };
      const wrongVerifier = await token(origin, { ...base, code_verifier: 'x'.repeat(43) });
      expect(wrongVerifier.status).toBe(400);
      expect(wrongVerifier.body.error).toBe('invalid_grant');
      // The failed attempt used the code up.
      const late = await token(origin, { ...base, code_verifier: provider.verifier });
      expect(late.body.error).toBe('invalid_grant');

      // A code exchanged, then replayed: the tokens of the first exchange stop working.
      const again = new MemoryOAuthProvider('http://127.0.0.1:53682/callback');
      const t2 = new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { authProvider: again });
      await new Client({ name: 'x', version: '0' }).connect(t2).catch(() => undefined);
      const r2 = await consentRequestOf(again.authorizationUrl!);
      const code2 = new URL(
        (await consent(holder, { request: r2, allow: true, agent_id: acct.agent_id })).body.redirect_to,
      ).searchParams.get('code')!;
      const form2 = {
        grant_type: 'authorization_code',
        code: code2,
        redirect_uri: again.redirectUrl,
        client_id: again.client!.client_id,
        code_verifier: again.verifier,
      };
      const issued = await token(origin, form2);
      expect(OAuthTokensSchema.parse(issued.body)).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
      expect((await callMcp(`${origin}/mcp`, issued.body.access_token)).status).toBe(200);
      expect((await token(origin, form2)).body.error).toBe('invalid_grant');
      expect((await callMcp(`${origin}/mcp`, issued.body.access_token)).status).toBe(401);
    });

    it('the holder may deny: the client gets access_denied with its state', async () => {
      const provider = new MemoryOAuthProvider('http://127.0.0.1:53682/callback');
      const transport = new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { authProvider: provider });
      await new Client({ name: 'x', version: '0' }).connect(transport).catch(() => undefined);
      const request = await consentRequestOf(provider.authorizationUrl!);
      const answer = await consent(holder, { request, allow: false });
      const redirect = new URL(answer.body.redirect_to);
      expect(redirect.searchParams.get('error')).toBe('access_denied');
      expect(redirect.searchParams.get('state')).toBe('state-of-the-e2e-client');
      expect(redirect.searchParams.get('code')).toBeNull();
      expect((await api.device(acct.device_id).get(`/oauth/requests/${request}`)).status).toBe(409);
      expect((await api.device(acct.device_id).get('/oauth/requests/oar_unknown')).status).toBe(404);
    });

    it('knows a client by its client ID metadata document (an https client_id; http for the test host here)', async () => {
      const redirectUri = 'http://127.0.0.1:53999/cb';
      let docUrl = '';
      const server: Server = createServer((_req, res) =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ client_id: docUrl, client_name: 'Doc Client', redirect_uris: [redirectUri] })),
      );
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      docUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/client.json`;
      try {
        const metadata = OAuthMetadataSchema.parse(
          await (await fetch(`${origin}/.well-known/oauth-authorization-server`)).json(),
        );
        const clientInformation = { client_id: docUrl };
        const { authorizationUrl, codeVerifier } = await startAuthorization(origin, {
          metadata,
          clientInformation,
          redirectUrl: redirectUri,
          resource: new URL(`${origin}/mcp`),
          state: 's1',
        });
        const request = await consentRequestOf(authorizationUrl);
        const view = await api.device(acct.device_id).get(`/oauth/requests/${request}`);
        expect(view.body).toMatchObject({ client_name: 'Doc Client', client_kind: 'metadata_document' });
        const answer = await consent(holder, { request, allow: true, agent_id: acct.agent_id });
        const tokens = await exchangeAuthorization(origin, {
          metadata,
          clientInformation,
          authorizationCode: new URL(answer.body.redirect_to).searchParams.get('code')!,
          codeVerifier,
          redirectUri,
          resource: new URL(`${origin}/mcp`),
        });
        expect((await callMcp(`${origin}/mcp`, tokens.access_token)).status).toBe(200);
      } finally {
        server.close();
      }
    });

    it("answers the OAuth endpoints' errors as the RFCs say, never a 5xx", async () => {
      const register = (body: unknown) =>
        fetch(`${origin}/oauth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
      expect((await register({ redirect_uris: ['http://evil.example/cb'] })).body.error).toBe('invalid_redirect_uri');
      expect((await register({ redirect_uris: ['https://ok.example/cb#frag'] })).body.error).toBe(
        'invalid_redirect_uri',
      );
      expect((await register({})).body.error).toBe('invalid_client_metadata');
      expect((await register({ redirect_uris: ['https://ok.example/cb'], grant_types: ['password'] })).body.error).toBe(
        'invalid_client_metadata',
      );
      const confidential = await register({ redirect_uris: ['https://ok.example/cb'], client_name: 'Server app' });
      expect(confidential.status).toBe(201);
      expect(confidential.body).toMatchObject({ token_endpoint_auth_method: 'client_secret_basic' });
      expect(confidential.body.client_secret).toMatch(/^aas_/);

      const authorize = (params: Record<string, string>) =>
        fetch(`${origin}/oauth/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' });
      const unknown = await authorize({ client_id: 'oac_nobody', response_type: 'code' });
      expect(unknown.status).toBe(400);
      expect(await unknown.json()).toMatchObject({ error: 'invalid_client' });
      const pkce = { code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' };
      const client = { client_id: confidential.body.client_id, redirect_uri: 'https://ok.example/cb' };
      const badRedirect = await authorize({
        ...client,
        redirect_uri: 'https://ok.example/other',
        response_type: 'code',
        ...pkce,
      });
      expect(badRedirect.status).toBe(400);
      const plain = await authorize({
        ...client,
        response_type: 'code',
        code_challenge: 'abc',
        code_challenge_method: 'plain',
        state: 'z',
      });
      expect(plain.status).toBe(302);
      const plainTo = new URL(plain.headers.get('location')!);
      expect(plainTo.searchParams.get('error')).toBe('invalid_request');
      expect(plainTo.searchParams.get('state')).toBe('z');
      const implicit = await authorize({ ...client, response_type: 'token', ...pkce });
      expect(new URL(implicit.headers.get('location')!).searchParams.get('error')).toBe('unsupported_response_type');
      const otherResource = await authorize({
        ...client,
        response_type: 'code',
        ...pkce,
        resource: 'https://x.example/mcp',
      });
      expect(new URL(otherResource.headers.get('location')!).searchParams.get('error')).toBe('invalid_target');

      const basic = `Basic ${Buffer.from(`${confidential.body.client_id}:wrong`).toString('base64')}`;
      const wrongSecret = await token(
        origin,
        { grant_type: 'authorization_code', code: 'x', code_verifier: 'y' },
        { authorization: basic },
      );
      expect(wrongSecret.status).toBe(401);
      expect(wrongSecret.body.error).toBe('invalid_client');
      expect(wrongSecret.headers.get('www-authenticate')).toMatch(/^Basic/);
      const grant = await token(origin, {
        grant_type: 'password',
        client_id: confidential.body.client_id,
        client_secret: confidential.body.client_secret,
      });
      expect(grant.body.error).toBe('unsupported_grant_type');
      const missing = await token(origin, {
        grant_type: 'authorization_code',
        client_id: confidential.body.client_id,
        client_secret: confidential.body.client_secret,
      });
      expect(missing.body).toMatchObject({ error: 'invalid_request', error_description: 'code: is required' });
      const noClient = await token(origin, { grant_type: 'authorization_code', code: 'x', code_verifier: 'y' });
      expect(noClient.body.error).toBe('invalid_client');
      const badCode = await token(origin, {
        grant_type: 'authorization_code',
        code: 'aac_nothing',
        code_verifier: 'y'.repeat(43),
        client_id: confidential.body.client_id,
        client_secret: confidential.body.client_secret,
      });
      expect(badCode.body.error).toBe('invalid_grant');
      const twice = await fetch(`${origin}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=refresh_token&grant_type=authorization_code',
      });
      expect(twice.status).toBe(400);
      expect(await twice.json()).toMatchObject({ error: 'invalid_request' });
      const revoke = await fetch(`${origin}/oauth/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          token: 'aar_unknown',
          client_id: confidential.body.client_id,
          client_secret: confidential.body.client_secret,
        }),
      });
      expect(revoke.status).toBe(200);
      const garbage = await fetch(`${origin}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{not json',
      });
      expect(garbage.status).toBe(400);
      expect(await garbage.json()).toMatchObject({ error: 'invalid_request' });
    });
  });
}

describe('OAuth access tokens expire (all-in-one, 2 s tokens)', () => {
  let stack: Stack;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;

  beforeAll(async () => {
    db = await createTestDatabase();
    stack = await startStack({
      mode: 'all-in-one',
      databaseUrl: db.url,
      name: 'mcp-oauth-expiry',
      env: { OAUTH_ACCESS_TOKEN_TTL_SECONDS: '2' },
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await db?.drop();
  });

  it('an expired token is a 401 naming the resource metadata; the SDK client then refreshes by itself', async () => {
    const api = apiClient(stack.baseUrl);
    const acct = await api.newAccount();
    const origin = new URL(stack.baseUrl).origin;
    const { client, provider } = await connectWithOAuth({
      mcpUrl: `${origin}/mcp`,
      holder: { baseUrl: stack.baseUrl, deviceId: acct.device_id },
      agent: { agent_id: acct.agent_id },
    });
    const expired = provider.saved!.access_token;
    expect((await callMcp(`${origin}/mcp`, expired)).status).toBe(200);
    await sleep(2500);
    const refused = await callMcp(`${origin}/mcp`, expired);
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ code: 'access_token_expired' });
    expect(refused.challenge).toBe(
      `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description="The access token has expired: refresh it"`,
    );
    const tools = await client.listTools();
    expect(tools.tools).toHaveLength(8);
    expect(provider.saved!.access_token).not.toBe(expired);
    await client.close();
  });
});
