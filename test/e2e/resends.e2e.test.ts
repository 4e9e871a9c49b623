// A bus call sent again (its first replica died or went silent after doing the work, or NATS lost the answer) is
// answered with the first outcome, on the real services over NATS: a new credential is not made twice, a vault call
// is not refused as already executed, a batch is not refused for the TOTP code its first send used. The resend is
// made here as the requester makes it (nats-calls.ts): the same call id and key, marked as sent again.
import { randomBytes, randomUUID } from 'node:crypto';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { generate } from 'otplib';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pino } from 'pino';
import { type Bus, connectNatsBus } from '@agent-auth/bus';
import {
  actionsEndpoints,
  type DevicePrincipal,
  type EndpointDef,
  identityEndpoints,
  type ReplyEnvelope,
  subjectOf,
  vaultEndpoints,
} from '@agent-auth/contracts';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { connectWithOAuth } from '../harness/oauth-client.js';
import { parseExposition, sampleValue } from '../harness/prometheus-text.js';
import { startStack, type Stack } from '../harness/stack.js';
import { decisionChallenge, softwarePasskey } from '../harness/software-passkey.js';
import { startUpstream, type Upstream } from '../harness/upstream.js';

const { natsUrl } = inject('infra');
const NO_PROOF = { signature: null, timestamp: null, webauthn: null, relying_party: null };

describe.skipIf(!natsUrl)('a call sent again gets its first outcome (services over NATS)', () => {
  let stack: Stack;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let sql: postgres.Sql;
  let api: ApiClient;
  let nc: NatsConnection;
  let bus: Bus;
  let upstream: Upstream;
  let acct: Awaited<ReturnType<ApiClient['newAccount']>>;
  let device: DevicePrincipal;

  beforeAll(async () => {
    db = await createTestDatabase();
    upstream = await startUpstream({
      handler: (req, res) =>
        res
          .writeHead(201, { 'content-type': 'application/json' })
          .end(`{"made":"${randomUUID()}","n":${req.url.length}}`),
    });
    // A service with no replica is given up on quickly (the last test stops two).
    stack = await startStack({
      mode: 'processes',
      databaseUrl: db.url,
      natsUrl,
      name: 'resends',
      env: { BUS_NO_RESPONDERS_WAIT_MS: '300' },
    });
    sql = postgres(db.url, { max: 1, onnotice: () => {} });
    api = apiClient(stack.baseUrl);
    nc = await connect({ servers: natsUrl! });
    bus = await connectNatsBus({
      url: natsUrl!,
      prefix: stack.prefix,
      timeoutMs: 10_000,
      name: 'resends-test',
      log: pino({ level: 'silent' }),
    });
    acct = await api.newAccount();
    device = await bus.request(actionsEndpoints.authenticateDevice, { device_id: acct.device_id });
  }, 120_000);
  afterAll(async () => {
    await bus?.close();
    await nc?.close();
    await sql?.end();
    await stack?.stop();
    await upstream?.close();
    await db?.drop();
  });

  /** One call as the bus's requester sends it: its id and (confidential endpoints) key, then the same again. */
  const newCall = (endpoint: EndpointDef) => ({
    endpoint,
    id: `resends.${randomUUID()}`,
    key: endpoint.confidential ? randomBytes(32).toString('base64') : undefined,
  });

  /** Sends a call (again, when `resent`) and waits for its answer, passing over progress messages (empty ones). */
  const send = async (call: ReturnType<typeof newCall>, payload: unknown, resent: boolean) => {
    const h = headers();
    h.set('x-call-id', call.id);
    if (call.key) h.set('x-call-key', call.key);
    if (resent) h.set('x-resent', '1');
    const reply = `_INBOX.resends.${randomUUID()}`;
    const answered = new Promise<ReplyEnvelope>((resolve) => {
      const sub = nc.subscribe(reply, {
        callback: (_err, msg) => {
          if (msg.data.length === 0) return;
          sub.unsubscribe();
          resolve(msg.json<ReplyEnvelope>());
        },
      });
    });
    await nc.flush();
    nc.publish(subjectOf(stack.prefix, call.endpoint), JSON.stringify(payload), { reply, headers: h });
    return answered;
  };

  /** The call sent, then sent again: both answers. */
  const sentTwice = async (endpoint: EndpointDef, payload: unknown) => {
    const call = newCall(endpoint);
    const first = await send(call, payload, false);
    return { call, first, again: await send(call, payload, true) };
  };

  const keptOutcomes = async () =>
    (
      await sql<Array<{ text: string }>>`
        select outcome::text as text from actions.call_outcomes
        union all select outcome::text from identity.call_outcomes
        union all select outcome::text from vault.call_outcomes`
    ).map((r) => r.text);

  it('answers a new account, device, agent, TOTP secret and OAuth client sent again with the first, kept sealed', async () => {
    const secrets: string[] = [];
    const twice = async (endpoint: EndpointDef, payload: unknown, secretOf: (data: any) => string) => {
      const { first, again } = await sentTwice(endpoint, payload);
      expect(first.ok, JSON.stringify(first)).toBe(true);
      expect(again, endpoint.name).toEqual(first);
      secrets.push(secretOf((first as { data: unknown }).data));
    };
    await twice(
      actionsEndpoints.createAccount,
      { first_device: { name: 'twice', public_key: null } },
      (d) => d.api_key,
    );
    await twice(actionsEndpoints.createDevice, { device, new_device: { name: 'second', public_key: null } }, (d) =>
      String(d.device_id),
    );
    await twice(actionsEndpoints.createAgent, { device, name: 'twice' }, (d) => d.api_key);
    await twice(actionsEndpoints.enrollTotp, { device }, (d) => d.secret);
    const registration = {
      redirect_uris: ['https://app.example/callback'],
      client_name: 'twice',
      client_uri: null,
      logo_uri: null,
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: null,
      response_types: null,
      scope: null,
    };
    await twice(identityEndpoints.registerClient, registration, (d) => d.client_secret);
    // One agent and one second device made, not two.
    const agents = (await api.device(acct.device_id).get('/agents')).body.agents as Array<{ name: string }>;
    expect(agents.filter((a) => a.name === 'twice')).toHaveLength(1);
    const devices = await sql`select 1 from actions.devices where account_id = ${acct.account_id}`;
    expect(devices).toHaveLength(2);
    // Kept at rest only sealed: no credential in the clear in any service's kept outcomes.
    const kept = (await keptOutcomes()).join('\n');
    expect(secrets.every((s) => typeof s === 'string' && s.length >= 16)).toBe(true);
    for (const secret of secrets) expect(kept).not.toContain(secret);
  });

  it('answers a refresh sent again with the tokens it gave, and leaves the connection open', async () => {
    const { provider } = await connectWithOAuth({
      mcpUrl: `${new URL(stack.baseUrl).origin}/mcp`,
      holder: { baseUrl: stack.baseUrl, deviceId: acct.device_id },
      agent: { agent_name: 'refreshed twice' },
    });
    const client = provider.client as { client_id: string; client_secret?: string };
    const refresh = {
      client: { client_id: client.client_id, client_secret: client.client_secret ?? null },
      refresh_token: provider.saved!.refresh_token!,
      resource: null,
    };
    const { first, again } = await sentTwice(identityEndpoints.refreshTokens, refresh);
    expect(first.ok, JSON.stringify(first)).toBe(true);
    // Not "used already: its connection is revoked": the same tokens, and they work.
    expect(again).toEqual(first);
    const tokens = (first as { data: { access_token: string } }).data;
    const principal = await bus.request(identityEndpoints.authenticateToken, { access_token: tokens.access_token });
    expect(principal.connection_id).toMatch(/^ocn_/);
  });

  it('answers a vault execution sent again with the upstream answer the first got, the call made once', async () => {
    const deviceApi = api.device(acct.device_id);
    const stored = await deviceApi.post('/vault/credentials', {
      service_name: 'twice-api',
      credential_value: `sk_twice_${randomUUID()}`,
      allowed_hosts: ['127.0.0.1'],
    });
    expect(stored.status).toBe(200);
    const created = await api.agent(acct.api_key).post('/actions', {
      action_type: 'system',
      title: 'call it once',
      metadata: { vault_execute: true, service_name: 'twice-api', method: 'POST', url: `${upstream.origin}/once` },
    });
    expect(created.status).toBe(200);
    expect(
      (await deviceApi.post(`/actions/${created.body.id}/approve`, { content_hash: created.body.content_hash })).status,
    ).toBe(200);
    const agent = await bus.request(actionsEndpoints.authenticateAgent, { api_key: acct.api_key });
    const { first, again } = await sentTwice(vaultEndpoints.execute, { agent, request_id: created.body.id });
    expect(first).toMatchObject({ ok: true, data: { status_code: 201 } });
    // Not 409 already_executed: the upstream's status and body as the first send had them.
    expect(again).toEqual(first);
    expect(upstream.seen.filter((r) => r.url === '/once')).toHaveLength(1);
    const body = (first as { data: { body: string } }).data.body;
    expect((await keptOutcomes()).join('\n')).not.toContain(JSON.parse(body).made);
  });

  it('answers a batch sent again with its first results, not a refusal of the TOTP code its first send used', async () => {
    const other = await api.newAccount();
    const otherApi = api.device(other.device_id);
    const totp = (await otherApi.post('/totp/enroll')).body as { secret: string };
    const holder = await bus.request(actionsEndpoints.authenticateDevice, { device_id: other.device_id });
    const pending = async (title: string) =>
      (await api.agent(other.api_key).post('/actions', { action_type: 'communication', title })).body as {
        id: string;
        content_hash: string | null;
      };
    const [one, two] = [await pending('first of the batch'), await pending('denied before')];
    expect((await otherApi.post(`/actions/${two.id}/deny`, {})).status).toBe(200);
    const batch = {
      device: holder,
      requests: [one, two].map((r) => ({ id: r.id, content_hash: r.content_hash })),
      proof: NO_PROOF,
      totp_code: await generate({ secret: totp.secret }),
    };
    const { call, first, again } = await sentTwice(actionsEndpoints.approveMany, batch);
    const statuses = (reply: ReplyEnvelope) =>
      reply.ok ? (reply.data as { results: Array<{ status: number }> }).results.map((r) => r.status) : reply.error;
    expect(statuses(first)).toEqual([200, 409]);
    expect(again).toEqual(first);
    // The first replica died after its code was accepted and before it kept an outcome: the code is accepted again
    // for the same call (and only for it), and the requests answer as they stand.
    await sql`delete from actions.call_outcomes where call_id = ${call.id}`;
    expect(statuses(await send(call, batch, true))).toEqual([200, 409]);
    const another = { ...call, id: `resends.${randomUUID()}` };
    expect(await send(another, batch, true)).toMatchObject({ ok: false, error: { code: 'totp_reused' } });
  });

  it('accepts a passkey approval sent again after its first replica accepted the assertion and died', async () => {
    const base = new URL(stack.baseUrl);
    base.hostname = 'localhost';
    const local = apiClient(base.href.replace(/\/$/, ''));
    const holder = await local.newAccount();
    const passkey = softwarePasskey({ rpId: 'localhost', origin: base.origin });
    const options = (await local.device(holder.device_id).post('/device/passkeys/options')).body;
    const registered = await local.device(holder.device_id).post('/device/passkeys', passkey.register(options));
    expect(registered.status).toBe(200);
    const pending = (await local.agent(holder.api_key).post('/actions', { action_type: 'legal', title: 'Sign' })).body;
    const timestamp = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const challenge = decisionChallenge(pending.id, 'approve', pending.content_hash, timestamp);
    const approval = {
      device: await bus.request(actionsEndpoints.authenticateDevice, { device_id: holder.device_id }),
      id: pending.id,
      proof: {
        signature: null,
        timestamp,
        webauthn: passkey.assert(challenge),
        relying_party: { rp_id: 'localhost', origins: [base.origin] },
      },
      totp_code: null,
      content_hash: pending.content_hash,
      payment_method: null,
      grant: null,
      updated_input: null,
    };
    // What the first replica did before it died: the assertion accepted in its call (the sign count raised, the
    // challenge kept), the request not yet approved, no outcome kept.
    const call = newCall(actionsEndpoints.approve);
    const passkeyId = registered.body.passkey_id as string;
    await sql`update actions.passkeys set sign_count = 1 where id = ${passkeyId}`;
    await sql`insert into actions.passkey_assertions (passkey_id, challenge, call_id)
              values (${passkeyId}, ${challenge}, ${call.id})`;
    const another = newCall(actionsEndpoints.approve);
    expect(await send(another, approval, true)).toMatchObject({
      ok: false,
      error: { code: 'passkey_assertion_invalid' },
    });
    expect(await send(call, approval, false)).toMatchObject({
      ok: false,
      error: { code: 'passkey_assertion_invalid' },
    });
    expect(await send(call, approval, true)).toMatchObject({
      ok: true,
      data: { id: pending.id, status: 'approved', resolved_by: 'biometric' },
    });
  });

  it('sends a create or a vault execution once when no replica answers, and says when to retry', async () => {
    const created = await api.agent(acct.api_key).post('/actions', {
      action_type: 'system',
      title: 'never executed',
      metadata: { vault_execute: true, service_name: 'twice-api', method: 'POST', url: `${upstream.origin}/never` },
    });
    await api
      .device(acct.device_id)
      .post(`/actions/${created.body.id}/approve`, { content_hash: created.body.content_hash });
    // The agent's key is remembered by the gateway (verified a moment ago), so only the create itself needs actions.
    for (const service of ['actions', 'vault-executor'])
      for (const child of stack.processes(service)) child.kill('SIGKILL');
    const gatewayMetrics = async () =>
      parseExposition(await (await fetch(`${new URL(stack.baseUrl).origin}/metrics`)).text());
    const count = (page: Awaited<ReturnType<typeof gatewayMetrics>>, subject: string) =>
      sampleValue(page, 'agent_auth_bus_request_duration_seconds_count', { subject, outcome: '503' });
    const before = await gatewayMetrics();
    const refused = await api.agent(acct.api_key).post('/actions', { action_type: 'purchase', title: 'x', amount: 1 });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    const executed = await api.agent(acct.api_key).post(`/vault/execute/${created.body.id}`);
    expect(executed.status).toBe(503);
    expect(executed.headers.get('retry-after')).toBe('1');
    const after = await gatewayMetrics();
    // Each sent over the bus once: no second call of the gateway's own after the 503.
    expect(count(after, 'actions.create') - count(before, 'actions.create')).toBe(1);
    expect(count(after, 'vault.execute') - count(before, 'vault.execute')).toBe(1);
  });
});
