import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { natsServerAvailable, startPrivateNats } from '../harness/nats-server.js';
import { secondSession } from '../harness/sessions.js';
import { startStack, type Stack } from '../harness/stack.js';
import { selfSignedCert, startUpstream, type Upstream, trustFile } from '../harness/upstream.js';

// A NATS server of its own, since this test stops it; the shared one serves other test files.
// One process per service, each with its database connection: not on the embedded Postgres, which takes one.
const skip = !natsServerAvailable()
  ? 'no nats-server binary to run a private server'
  : secondSession
    ? 'the embedded Postgres takes one connection at a time'
    : false;

describe.skipIf(skip)(`webhooks survive a NATS restart${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let nats: Awaited<ReturnType<typeof startPrivateNats>>;
  let stack: Stack;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let api: ApiClient;
  let receiver: Upstream;
  let failing = true;

  beforeAll(async () => {
    nats = await startPrivateNats();
    db = await createTestDatabase();
    const cert = selfSignedCert();
    const caFile = trustFile(cert);
    receiver = await startUpstream({
      tls: cert,
      handler: (_req, res) => void res.writeHead(failing ? 503 : 200).end(),
    });
    stack = await startStack({
      mode: 'processes',
      databaseUrl: db.url,
      natsUrl: nats.url,
      name: 'nats-restart',
      env: {
        NODE_EXTRA_CA_CERTS: caFile,
        WEBHOOK_RETRY_SCHEDULE: Array(60).fill('0.5').join(','),
        WEBHOOK_TIMEOUT_MS: '2000',
        SWEEP_INTERVAL_MS: '200',
        RELAY_POLL_MS: '500',
      },
    });
    api = apiClient(stack.baseUrl);
  });
  afterAll(async () => {
    await stack?.stop();
    await nats?.stop();
    await receiver?.close();
    await db?.drop();
  });

  it('delivers webhooks of resolutions made before and during the outage once NATS is back', async () => {
    const acct = await api.newAccount();
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await api.agent(acct.api_key).post('/actions', {
        action_type: 'purchase',
        title: `Order ${i}`,
        amount: 5,
        callback_url: `${receiver.origin}/hook`,
      });
      expect(r.status).toBe(200);
      ids.push(r.body.id);
    }
    // Before: approved while the receiver fails (jobs wait in the notifier's table).
    for (const id of ids.slice(0, 10))
      expect((await api.device(acct.device_id).post(`/actions/${id}/approve`)).status).toBe(200);
    const arrivals = (id: string) => receiver.seen.filter((r) => r.body.includes(`"id":"${id}"`));
    await expect.poll(() => ids.slice(0, 10).every((id) => arrivals(id).length > 0), { timeout: 15_000 }).toBe(true);

    await nats.stop();
    // During: the sweeper expires the rest; their events wait in the outbox, since there is no stream to publish to.
    await db.sql`update actions.requests set expires_at = now() - interval '1 second' where id = any(${ids.slice(10)})`;
    await expect
      .poll(
        async () =>
          Number(
            (
              await db.sql`select count(*)::int as n from actions.outbox where request_id = any(${ids.slice(10)}) and type = 'action.resolved' and published_at is null`
            )[0]!.n,
          ),
        { timeout: 10_000 },
      )
      .toBe(10);
    failing = false;
    await nats.start();

    await expect
      .poll(
        async () =>
          Number(
            (
              await db.sql`select count(*)::int as n from notifier.deliveries where state = 'delivered' and request_id = any(${ids})`
            )[0]!.n,
          ),
        { timeout: 45_000, interval: 500 },
      )
      .toBe(20);
    for (const id of ids) {
      const seen = arrivals(id);
      expect(new Set(seen.map((s) => s.headers['webhook-id'])).size).toBe(1);
      const payload = new Webhook(acct.webhook_secret).verify(
        seen.at(-1)!.body,
        seen.at(-1)!.headers as Record<string, string>,
      ) as { status: string };
      expect(payload.status).toBe(ids.indexOf(id) < 10 ? 'approved' : 'expired');
    }
  }, 120_000);
});
