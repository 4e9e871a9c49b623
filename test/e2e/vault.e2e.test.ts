import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { vaultContentHash } from '@agent-auth/contracts';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';
import { selfSignedCert, startUpstream, type SeenRequest, type Upstream } from '../harness/upstream.js';
import { itBesideTheService } from '../harness/sessions.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', skip: false },
];

type Account = Awaited<ReturnType<ApiClient['newAccount']>>;

/** The upstream API the vault calls: echoes what it got, or misbehaves on purpose by path. */
function upstreamHandler(req: SeenRequest, res: ServerResponse): void {
  const path = req.url.split('?')[0];
  if (path === '/redirect') {
    res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/iam/' });
    return void res.end();
  }
  if (path === '/big') return void res.end('x'.repeat(20_000));
  if (path === '/slow') return void setTimeout(() => res.end('too late'), 3_000);
  if (path === '/unhurried') return void setTimeout(() => res.end('in good time'), 400);
  res.writeHead(200, {
    'content-type': 'application/json',
    'x-echo-authorization': String(req.headers.authorization ?? ''),
    'x-request-path': req.url,
  });
  res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: req.body }));
}

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`vault end to end (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let https: Upstream;
    let http: Upstream;
    let acct: Account;
    const secret = `sk_live_${randomBytes(16).toString('hex')}`;
    const secretBase64 = Buffer.from(secret).toString('base64');

    beforeAll(async () => {
      const cert = selfSignedCert();
      const certFile = join(mkdtempSync(join(tmpdir(), 'aa-ca-')), 'upstream-ca.pem');
      writeFileSync(certFile, cert.cert);
      https = await startUpstream({ tls: cert, handler: upstreamHandler });
      http = await startUpstream({ handler: upstreamHandler });
      db = await createTestDatabase();
      stack = await startStack({
        mode,
        databaseUrl: db.url,
        natsUrl,
        name: 'vault',
        env: {
          // 127.0.0.1 is the development host; localhost deliberately is not, so its loopback address is refused.
          ALLOW_INSECURE_HOSTS: '127.0.0.1',
          VAULT_EXTRA_CA_CERTS: certFile,
          VAULT_CONNECT_TIMEOUT_MS: '1000',
          VAULT_RESPONSE_TIMEOUT_MS: '1000',
          VAULT_MAX_RESPONSE_BYTES: '8192',
        },
      });
      api = apiClient(stack.baseUrl);
      acct = await api.newAccount();
      // Many vault calls in one account: the free plan's monthly quota is not what these tests are about.
      expect((await api.device(acct.device_id).post('/account/plan', { plan: 'unlimited' })).status).toBe(200);
    });
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
      await Promise.all([https?.close(), http?.close()]);
    });

    const storeCredential = async (body: Record<string, unknown>) => {
      const r = await api.device(acct.device_id).post('/vault/credentials', { credential_value: secret, ...body });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body as { credential_id: string };
    };

    /** Agent asks, device approves with the hash it was shown: the approved request's id. */
    const approvedCall = async (
      call: { service_name: string; method: string; url: string; headers?: Record<string, string>; body?: string },
      holder: Account = acct,
    ) => {
      const created = await api.agent(holder.api_key).post('/actions', {
        action_type: 'system',
        title: `call ${call.service_name}`,
        metadata: { vault_execute: true, ...call },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      expect(created.body.content_hash).toBe(vaultContentHash(call));
      const approved = await api
        .device(holder.device_id)
        .post(`/actions/${created.body.id}/approve`, { content_hash: created.body.content_hash });
      expect(approved.status, JSON.stringify(approved.body)).toBe(200);
      return created.body.id as string;
    };
    const execute = (id: string, apiKey = acct.api_key) => api.agent(apiKey).post(`/vault/execute/${id}`);
    const auditOf = async (id: string) => db.sql<{ event: string; actor: string; detail: Record<string, unknown> }[]>`
      select event, actor, detail from actions.audit_events where request_id = ${id} order by id`;

    it('stores credentials without ever returning their values; 409 on a duplicate, 404 on a missing one', async () => {
      const device = api.device(acct.device_id);
      const created = await device.post('/vault/credentials', {
        service_name: 'crud-test',
        credential_value: secret,
        auth_type: 'api_key',
        auth_header: 'X-Api-Key',
        allowed_hosts: ['API.Example.com'],
        description: 'test',
      });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({
        service_name: 'crud-test',
        auth_type: 'api_key',
        auth_header: 'X-Api-Key',
        allowed_hosts: ['api.example.com'],
        description: 'test',
      });
      expect(created.body.credential_id).toMatch(/^cred_/);
      expect(JSON.stringify(created.body)).not.toContain(secret);

      const dup = await device.post('/vault/credentials', {
        service_name: 'crud-test',
        credential_value: 'other',
        allowed_hosts: ['a.example'],
      });
      expect(dup.status).toBe(409);
      expect(dup.body.detail).toMatch(/already exists/);

      const list = await device.get('/vault/credentials');
      expect(list.status).toBe(200);
      expect(list.body.credentials.map((c: { service_name: string }) => c.service_name)).toContain('crud-test');
      expect(JSON.stringify(list.body)).not.toContain(secret);

      const services = await api.agent(acct.api_key).get('/vault/services');
      expect(services.status).toBe(200);
      expect(services.body.services).toContainEqual({
        service_name: 'crud-test',
        auth_type: 'api_key',
        allowed_hosts: ['api.example.com'],
        description: 'test',
      });
      expect(JSON.stringify(services.body)).not.toContain(secret);

      expect((await device.delete(`/vault/credentials/${created.body.credential_id}`)).body).toEqual({
        deleted: true,
        id: created.body.credential_id,
      });
      expect((await device.delete(`/vault/credentials/${created.body.credential_id}`)).status).toBe(404);
      expect((await device.get('/vault/credentials')).body.credentials).toEqual([]);
    });

    it('validates credential bodies with the field named, and keeps each account to its own vault', async () => {
      const device = api.device(acct.device_id);
      const noHosts = await device.post('/vault/credentials', { service_name: 's', credential_value: 'v' });
      expect(noHosts.status).toBe(400);
      expect(noHosts.body.detail).toMatch(/^allowed_hosts/);
      const badHost = await device.post('/vault/credentials', {
        service_name: 's',
        credential_value: 'v',
        allowed_hosts: ['https://x.com/path'],
      });
      expect(badHost.body.detail).toMatch(/^allowed_hosts\[0\]/);
      const badType = await device.post('/vault/credentials', {
        service_name: 's',
        credential_value: 'v',
        allowed_hosts: ['x.com'],
        auth_type: 'oauth',
      });
      expect(badType.body.detail).toMatch(/^auth_type/);
      const hostHeader = await device.post('/vault/credentials', {
        service_name: 's',
        credential_value: 'v',
        allowed_hosts: ['x.com'],
        auth_type: 'custom',
        auth_header: 'Host',
      });
      expect(hostHeader.body.detail).toMatch(/^auth_header/);
      expect((await api.agent(acct.api_key).get('/vault/credentials')).status).toBe(401);
      expect((await api.device(acct.device_id).get('/vault/services')).status).toBe(401);

      const other = await api.newAccount();
      const theirs = await api
        .device(other.device_id)
        .post('/vault/credentials', { service_name: 'theirs', credential_value: 'v', allowed_hosts: ['x.com'] });
      expect((await device.delete(`/vault/credentials/${theirs.body.credential_id}`)).status).toBe(404);
      expect(
        (await api.agent(acct.api_key).get('/vault/services')).body.services.map(
          (s: { service_name: string }) => s.service_name,
        ),
      ).not.toContain('theirs');
    });

    it('needs the matching content_hash to approve a vault request, and shows it in /pending', async () => {
      const call = { service_name: 'whatever', method: 'get', url: `${https.origin}/x` };
      const created = await api
        .agent(acct.api_key)
        .post('/actions', { action_type: 'system', title: 't', metadata: { vault_execute: true, ...call } });
      expect(created.body.content_hash).toBe(vaultContentHash(call));
      const pending = await api.device(acct.device_id).get('/pending');
      expect(pending.body.requests.find((r: { id: string }) => r.id === created.body.id).content_hash).toBe(
        created.body.content_hash,
      );
      const device = api.device(acct.device_id);
      expect((await device.post(`/actions/${created.body.id}/approve`, {})).status).toBe(403);
      const wrong = await device.post(`/actions/${created.body.id}/approve`, { content_hash: 'a'.repeat(64) });
      expect(wrong.status).toBe(403);
      expect(wrong.body.detail).toMatch(/content hash mismatch/);
      expect(
        (
          await device.post(`/actions/${created.body.id}/approve`, {
            content_hash: created.body.content_hash.toUpperCase(),
          })
        ).status,
      ).toBe(200);
    });

    it('refuses a vault request whose method or headers could never be sent, naming the field', async () => {
      const ask = (extra: Record<string, unknown>) =>
        api.agent(acct.api_key).post('/actions', {
          action_type: 'system',
          title: 'bad',
          metadata: { vault_execute: true, service_name: 's', method: 'GET', url: `${https.origin}/`, ...extra },
        });
      const split = await ask({ headers: { 'X-A': 'a\r\nX-Injected: 1' } });
      expect(split.status).toBe(400);
      expect(split.body.detail).toMatch(/^metadata\.headers\.X-A/);
      expect((await ask({ headers: { 'Bad Name': 'x' } })).body.detail).toMatch(/^metadata\.headers/);
      expect((await ask({ method: 'CONNECT' })).body.detail).toMatch(/^metadata\.method/);
      expect((await ask({ url: 'ftp://example.com/' })).body.detail).toMatch(/^metadata\.url/);
      expect(
        (
          await api.agent(acct.api_key).post('/actions', {
            action_type: 'purchase',
            title: 'x',
            metadata: { vault_execute: true, service_name: 's', method: 'GET', url: 'https://a.example/' },
          })
        ).body.detail,
      ).toMatch(/^action_type/);
    });

    itBesideTheService(
      "bearer: injects the credential over HTTPS, overrides the agent's own Authorization, redacts the echo, runs once",
      async () => {
        await storeCredential({ service_name: 'bearer-api', allowed_hosts: ['127.0.0.1'] });
        const id = await approvedCall({
          service_name: 'bearer-api',
          method: 'POST',
          url: `${https.origin}/v1/things?q=1`,
          headers: { Authorization: 'Bearer agent-chosen', 'X-Trace': 'abc', 'Content-Type': 'application/json' },
          body: '{"n":1}',
        });
        const before = https.seen.length;
        const r = await execute(id);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        const seen = https.seen.at(-1)!;
        expect(https.seen.length).toBe(before + 1);
        expect(seen).toMatchObject({ method: 'POST', url: '/v1/things?q=1', body: '{"n":1}' });
        expect(seen.headers.authorization).toBe(`Bearer ${secret}`);
        expect(seen.headers['x-trace']).toBe('abc');

        expect(r.body.status_code).toBe(200);
        expect(r.body.headers['content-type']).toBe('application/json');
        expect(r.body.headers['x-echo-authorization']).toBe('Bearer [redacted]');
        expect(r.body.headers.connection).toBeUndefined();
        expect(r.body.headers['keep-alive']).toBeUndefined();
        const echoed = JSON.parse(r.body.body);
        expect(echoed.headers.authorization).toBe('Bearer [redacted]');
        expect(echoed.headers['x-trace']).toBe('abc');
        expect(JSON.stringify(r.body)).not.toContain(secret);

        // A retry (e.g. after a lost answer) is not made again, and learns what the first call got.
        const again = await execute(id);
        expect(again.status).toBe(409);
        expect(again.body).toMatchObject({ code: 'already_executed', detail: expect.stringMatching(/answered 200/) });
        expect(https.seen.length).toBe(before + 1);

        const audit = await auditOf(id);
        expect(audit.map((a) => a.event)).toEqual([
          'created',
          'approved',
          'execution_started',
          'executed',
          'execution_refused',
        ]);
        expect(audit[3]).toMatchObject({
          actor: `agent:${acct.agent_id}`,
          detail: { target_host: '127.0.0.1', status_code: 200 },
        });
        expect(audit[4]!.detail).toMatchObject({ status: 409 });
      },
    );

    it('api_key, basic and custom: each header as the upstream sees it; the agent cannot set the credential header', async () => {
      await storeCredential({
        service_name: 'key-api',
        auth_type: 'api_key',
        auth_header: 'X-Api-Key',
        allowed_hosts: ['127.0.0.1'],
      });
      await storeCredential({ service_name: 'basic-api', auth_type: 'basic', allowed_hosts: ['127.0.0.1'] });
      await storeCredential({
        service_name: 'custom-api',
        auth_type: 'custom',
        auth_header: 'X-Custom-Auth',
        allowed_hosts: ['127.0.0.1'],
      });

      const key = await execute(
        await approvedCall({
          service_name: 'key-api',
          method: 'GET',
          url: `${https.origin}/k`,
          headers: { 'x-api-key': 'agent-chosen' },
        }),
      );
      expect(key.status, JSON.stringify(key.body)).toBe(200);
      expect(https.seen.at(-1)!.headers['x-api-key']).toBe(secret);
      expect(https.seen.at(-1)!.headers.authorization).toBeUndefined();

      const basic = await execute(
        await approvedCall({ service_name: 'basic-api', method: 'GET', url: `${http.origin}/b` }),
      );
      expect(basic.status, JSON.stringify(basic.body)).toBe(200);
      expect(http.seen.at(-1)!.headers.authorization).toBe(`Basic ${secretBase64}`);
      expect(basic.body.headers['x-echo-authorization']).toBe('Basic [redacted]');
      expect(basic.body.body).not.toContain(secretBase64);

      const custom = await execute(
        await approvedCall({
          service_name: 'custom-api',
          method: 'DELETE',
          url: `${http.origin}/c/1`,
          headers: { 'X-CUSTOM-AUTH': 'agent-chosen' },
        }),
      );
      expect(custom.status, JSON.stringify(custom.body)).toBe(200);
      expect(http.seen.at(-1)!.method).toBe('DELETE');
      expect(http.seen.at(-1)!.headers['x-custom-auth']).toBe(secret);
      expect(custom.body.body).not.toContain(secret);
    });

    itBesideTheService(
      'refuses when the stored hash no longer matches the call (403), and audits the refusal',
      async () => {
        await storeCredential({ service_name: 'hash-api', allowed_hosts: ['127.0.0.1'] });
        const id = await approvedCall({ service_name: 'hash-api', method: 'GET', url: `${https.origin}/h` });
        await db.sql`update actions.requests set content_hash = ${'b'.repeat(64)} where id = ${id}`;
        const before = https.seen.length;
        const r = await execute(id);
        expect(r.status).toBe(403);
        expect(r.body.detail).toMatch(/content hash mismatch/);
        expect(https.seen.length).toBe(before);
        expect((await auditOf(id)).slice(-2)).toMatchObject([
          { event: 'execution_refused', detail: { error_status: 403 } },
          { event: 'execution_released' },
        ]);
      },
    );

    itBesideTheService('refuses a host outside allowed_hosts (403) without calling it', async () => {
      await storeCredential({ service_name: 'narrow-api', allowed_hosts: ['api.example.com'] });
      const id = await approvedCall({ service_name: 'narrow-api', method: 'GET', url: `${https.origin}/n` });
      const before = https.seen.length;
      const r = await execute(id);
      expect(r.status).toBe(403);
      expect(r.body.detail).toMatch(/not in the allowed_hosts/);
      expect(https.seen.length).toBe(before);
      expect((await auditOf(id)).slice(-2)).toMatchObject([
        { event: 'execution_refused', detail: { target_host: '127.0.0.1', error_status: 403 } },
        { event: 'execution_released' },
      ]);
    });

    itBesideTheService(
      'leaves the approval usable after a refusal before the upstream is contacted, and uses it once called',
      async () => {
        // Unknown service, and a service name with a line break: the real 404 arrives at once, the request stays approved.
        const id = await approvedCall({ service_name: 'later-api', method: 'GET', url: `${https.origin}/later` });
        expect(await execute(id)).toMatchObject({
          status: 404,
          body: { detail: "Credential for service 'later-api' not found" },
        });
        const odd = await approvedCall({ service_name: 'odd\napi', method: 'GET', url: `${https.origin}/odd` });
        expect(await execute(odd)).toMatchObject({
          status: 404,
          body: { detail: "Credential for service 'odd\\napi' not found", code: 'service_credential_not_found' },
        });
        expect(await execute(odd)).toMatchObject({ status: 404 });
        // Host not allowed: 403, still approved; fixed by storing the credential again with the host allowed.
        const narrow = await storeCredential({ service_name: 'later-api', allowed_hosts: ['api.example.com'] });
        expect((await execute(id)).status).toBe(403);
        expect((await api.device(acct.device_id).delete(`/vault/credentials/${narrow.credential_id}`)).status).toBe(
          200,
        );
        await storeCredential({ service_name: 'later-api', allowed_hosts: ['127.0.0.1'] });
        const before = https.seen.length;
        expect((await execute(id)).status).toBe(200);
        expect(https.seen.length).toBe(before + 1);
        expect((await execute(id)).status).toBe(409);
        expect((await auditOf(id)).map((a) => a.event)).toEqual([
          'created',
          'approved',
          'execution_started',
          'execution_refused',
          'execution_released',
          'execution_started',
          'execution_refused',
          'execution_released',
          'execution_started',
          'executed',
          'execution_refused',
        ]);
      },
    );

    it('tells a retry made while the call runs what the call got, once it has answered', async () => {
      // The outcome is recorded after the agent's answer is sent; a retry that overtakes the record waits for it.
      await storeCredential({ service_name: 'unhurried-api', allowed_hosts: ['127.0.0.1'] });
      const id = await approvedCall({ service_name: 'unhurried-api', method: 'GET', url: `${https.origin}/unhurried` });
      const first = execute(id);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const retry = await execute(id);
      expect((await first).status).toBe(200);
      expect(retry.status).toBe(409);
      expect(retry.body).toMatchObject({ code: 'already_executed', detail: expect.stringMatching(/answered 200/) });
      expect((await auditOf(id)).map((a) => a.event)).toEqual([
        'created',
        'approved',
        'execution_started',
        'executed',
        'execution_refused',
      ]);
    });

    it('sends the named service its own credential, from a vault of 22 credentials as from one of 20', async () => {
      // An execution reads a small vault beside its claim and looks a larger one up by name: both must pick the
      // credential of the service the approved call names, and a deleted one is gone for both.
      const holder = await api.newAccount();
      const device = api.device(holder.device_id);
      const secretOf = (n: number) => `sk_many_${n}_${randomBytes(8).toString('hex')}`;
      const ids: string[] = [];
      const secrets: string[] = [];
      for (let n = 0; n < 22; n++) {
        secrets.push(secretOf(n));
        const service_name = `svc-${String(n).padStart(2, '0')}`;
        const r = await device.post('/vault/credentials', {
          service_name,
          credential_value: secrets[n],
          allowed_hosts: ['127.0.0.1'],
        });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        ids.push(r.body.credential_id);
      }
      const call = (n: number) => ({
        service_name: `svc-${String(n).padStart(2, '0')}`,
        method: 'GET',
        url: `${https.origin}/many/${n}`,
      });
      const sentFor = async (n: number) => {
        const id = await approvedCall(call(n), holder);
        const r = await execute(id, holder.api_key);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        const seen = https.seen.findLast((s) => s.url === `/many/${n}`);
        return seen?.headers.authorization;
      };
      // 22 credentials: each service gets its own, wherever it sorts (a vault read cut short would miss svc-21).
      for (const n of [0, 13, 21]) expect(await sentFor(n)).toBe(`Bearer ${secrets[n]}`);
      // 20 left: read beside the claim; the deleted service is not found, the others still get their own.
      for (const n of [7, 8]) expect((await device.delete(`/vault/credentials/${ids[n]}`)).status).toBe(200);
      for (const n of [0, 21]) expect(await sentFor(n)).toBe(`Bearer ${secrets[n]}`);
      const gone = await approvedCall(call(7), holder);
      expect(await execute(gone, holder.api_key)).toMatchObject({
        status: 404,
        body: { code: 'service_credential_not_found' },
      });
    });

    it('returns a redirect to a private address instead of following it', async () => {
      await storeCredential({ service_name: 'redirect-api', allowed_hosts: ['127.0.0.1'] });
      const before = http.seen.length;
      const r = await execute(
        await approvedCall({ service_name: 'redirect-api', method: 'GET', url: `${http.origin}/redirect` }),
      );
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.status_code).toBe(302);
      expect(r.body.headers.location).toBe('http://169.254.169.254/latest/meta-data/iam/');
      expect(http.seen.length).toBe(before + 1);
    });

    it('refuses a name that resolves to 127.0.0.1 when only the IP is a development host, and plain http to it', async () => {
      await storeCredential({ service_name: 'local-api', allowed_hosts: ['localhost'] });
      const before = https.seen.length;
      const r = await execute(
        await approvedCall({ service_name: 'local-api', method: 'GET', url: `https://localhost:${https.port}/l` }),
      );
      expect(r.status).toBe(403);
      expect(r.body.detail).toMatch(/localhost resolves to a loopback address/);
      expect(https.seen.length).toBe(before);
      const plain = await execute(
        await approvedCall({ service_name: 'local-api', method: 'GET', url: `http://localhost:${http.port}/l` }),
      );
      expect(plain.status).toBe(403);
      expect(plain.body.detail).toMatch(/https/);
    });

    itBesideTheService('answers 502 for an oversize response, a slow upstream and an unreachable one', async () => {
      await storeCredential({ service_name: 'bad-api', allowed_hosts: ['127.0.0.1'] });
      const big = await execute(
        await approvedCall({ service_name: 'bad-api', method: 'GET', url: `${https.origin}/big` }),
      );
      expect(big.status).toBe(502);
      expect(big.body.detail).toMatch(/too large/);
      const slowId = await approvedCall({ service_name: 'bad-api', method: 'GET', url: `${https.origin}/slow` });
      const slow = await execute(slowId);
      expect(slow.status).toBe(502);
      expect(slow.body.detail).toMatch(/time-out/);
      expect((await auditOf(slowId)).at(-1)).toMatchObject({
        event: 'execution_failed',
        detail: { target_host: '127.0.0.1', error_status: 502 },
      });
      const closed = await startUpstream({ handler: () => {} });
      await closed.close();
      const down = await execute(
        await approvedCall({ service_name: 'bad-api', method: 'GET', url: `${closed.origin}/` }),
      );
      expect(down.status).toBe(502);
      const again = await execute(slowId);
      expect(again.status).toBe(409);
      expect(again.body.detail).toMatch(/the call failed \(502\)/);
    });

    it("executes only the agent's own approved vault requests", async () => {
      await storeCredential({ service_name: 'own-api', allowed_hosts: ['127.0.0.1'] });
      const id = await approvedCall({ service_name: 'own-api', method: 'GET', url: `${http.origin}/o` });
      const other = (await api.device(acct.device_id).post('/agents', { name: 'other agent' })).body as {
        api_key: string;
      };
      expect((await execute(id, other.api_key)).status).toBe(404);
      expect((await execute('act_doesnotexist', acct.api_key)).status).toBe(404);

      const pending = await api.agent(acct.api_key).post('/actions', {
        action_type: 'system',
        title: 'p',
        metadata: { vault_execute: true, service_name: 'own-api', method: 'GET', url: `${http.origin}/p` },
      });
      const notYet = await execute(pending.body.id);
      expect(notYet.status).toBe(403);
      expect(notYet.body.detail).toMatch(/'pending', not approved/);
      const plain = await api
        .agent(acct.api_key)
        .post('/actions', { action_type: 'purchase', title: 'not a vault call' });
      await api.device(acct.device_id).post(`/actions/${plain.body.id}/approve`, {});
      expect((await execute(plain.body.id)).status).toBe(400);
      expect((await execute(id)).status).toBe(200);
    });

    itBesideTheService(
      'keeps no plaintext credential in the database, and the secret in no log line of the whole run',
      async () => {
        const rows = await db.sql<{ value_enc: string }[]>`select * from vault.credentials`;
        expect(rows.length).toBeGreaterThan(0);
        const table = JSON.stringify(rows);
        expect(table).not.toContain(secret);
        expect(table).not.toContain(secretBase64);
        for (const row of rows) expect(row.value_enc).toMatch(/^v1:v1:/);
        const audit = JSON.stringify(await db.sql`select * from actions.audit_events`);
        expect(audit).not.toContain(secret);
        expect(audit).toContain('executed');
        const logs = stack.logs();
        expect(logs).toContain('vault call executed');
        expect(logs).not.toContain(secret);
        expect(logs).not.toContain(secretBase64);
      },
    );
  });
}
