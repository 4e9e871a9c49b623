import { Webhook } from 'standardwebhooks';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';
import { selfSignedCert, startUpstream, trustFile, type Upstream } from '../harness/upstream.js';
import { itBesideTheService } from '../harness/sessions.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', skip: false },
];

// One run through everything that handles a secret (account creation, failed logins, TOTP, webhooks, the vault),
// logging at debug level; then no secret may be found in any log line of any process, nor as plaintext in any
// column of any table of any schema.
for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`secrets stay secret (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let upstream: Upstream;
    const secrets: Record<string, string> = {};

    beforeAll(async () => {
      db = await createTestDatabase();
      const cert = selfSignedCert();
      upstream = await startUpstream({
        tls: cert,
        handler: (req, res) =>
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ echoed: req.headers.authorization ?? null })),
      });
      const caFile = trustFile(cert);
      stack = await startStack({
        mode,
        databaseUrl: db.url,
        natsUrl,
        name: 'secrets',
        env: { LOG_LEVEL: 'debug', NODE_EXTRA_CA_CERTS: caFile, VAULT_EXTRA_CA_CERTS: caFile },
      });
      api = apiClient(stack.baseUrl);
    });
    afterAll(async () => {
      await stack?.stop();
      await upstream?.close();
      await db?.drop();
    });

    it('handles every kind of secret', async () => {
      const acct = await api.newAccount();
      Object.assign(secrets, { api_key: acct.api_key, device_id: acct.device_id, webhook_secret: acct.webhook_secret });
      const device = api.device(acct.device_id);
      const agent = (await device.post('/agents', { name: 'second bot' })).body as {
        api_key: string;
        webhook_secret: string;
      };
      Object.assign(secrets, { second_api_key: agent.api_key, second_webhook_secret: agent.webhook_secret });

      // Failed logins with near-misses of real secrets must not echo what was sent either.
      const nearKey = `${acct.api_key.slice(0, -4)}zzzz`;
      const nearDevice = `${acct.device_id.slice(0, -4)}zzzz`;
      Object.assign(secrets, { near_api_key: nearKey, near_device_id: nearDevice });
      expect((await api.agent(nearKey).get('/actions')).status).toBe(401);
      expect((await api.device(nearDevice).get('/pending')).status).toBe(401);

      const totp = (await device.post('/totp/enroll')).body as { secret: string; otpauth_url: string };
      secrets.totp_secret = totp.secret;
      const created = await api.agent(acct.api_key).post('/actions', {
        action_type: 'purchase',
        title: 'lamp',
        amount: 5,
        callback_url: `${upstream.origin}/hook`,
      });
      const code = await generate({ secret: totp.secret });
      expect((await device.post(`/actions/${created.body.id}/approve`, { totp_code: code })).body.resolved_by).toBe(
        'totp',
      );
      await expect.poll(() => upstream.seen.filter((r) => r.url === '/hook').length, { timeout: 10_000 }).toBe(1);
      const hook = upstream.seen.find((r) => r.url === '/hook')!;
      expect(() =>
        new Webhook(acct.webhook_secret).verify(hook.body, hook.headers as Record<string, string>),
      ).not.toThrow();

      secrets.credential = 'cred-value-Zq8xV3nP0-very-secret';
      expect(
        (
          await device.post('/vault/credentials', {
            service_name: 'api',
            credential_value: secrets.credential,
            allowed_hosts: ['127.0.0.1'],
          })
        ).status,
      ).toBe(200);
      const call = await api.agent(acct.api_key).post('/actions', {
        action_type: 'system',
        title: 'call',
        metadata: { vault_execute: true, service_name: 'api', method: 'GET', url: `${upstream.origin}/me` },
      });
      expect(
        (await device.post(`/actions/${call.body.id}/approve`, { content_hash: call.body.content_hash })).status,
      ).toBe(200);
      const executed = await api.agent(acct.api_key).post(`/vault/execute/${call.body.id}`);
      expect(executed.status).toBe(200);
      expect(upstream.seen.find((r) => r.url === '/me')!.headers.authorization).toBe(`Bearer ${secrets.credential}`);
      expect(executed.body.body).not.toContain(secrets.credential);
    });

    it('no secret in any log line of any process', async () => {
      expect(Object.keys(secrets)).toHaveLength(9);
      // Give the notifier and relays a moment to log what follows the last request.
      await new Promise((r) => setTimeout(r, 500));
      const logs = stack.logs();
      expect(logs).toContain('webhook'); // the run was logged at all
      for (const [name, value] of Object.entries(secrets)) {
        expect(logs.includes(value), `${name} found in the logs`).toBe(false);
        // The random part alone, in case a prefix was stripped before logging.
        const core = value.replace(/^(aa_|dev_|whsec_)/, '');
        expect(logs.includes(core), `${name} (without its prefix) found in the logs`).toBe(false);
      }
    });

    itBesideTheService('no secret as plaintext in any column of any table', async () => {
      const tables = await db.sql<Array<{ schema: string; table: string }>>`
        select table_schema as schema, table_name as table from information_schema.tables
        where table_schema in ('actions', 'policy', 'vault', 'notifier', 'gateway') and table_type = 'BASE TABLE'`;
      expect(tables.length).toBeGreaterThan(10);
      for (const { schema, table } of tables) {
        const rows = await db.sql.unsafe(`select t::text as row from "${schema}"."${table}" t`);
        const text = rows.map((r) => r.row as string).join('\n');
        for (const [name, value] of Object.entries(secrets)) {
          const core = value.replace(/^(aa_|dev_|whsec_)/, '');
          expect(text.includes(core), `${name} found in ${schema}.${table}`).toBe(false);
        }
      }
    });
  });
}
