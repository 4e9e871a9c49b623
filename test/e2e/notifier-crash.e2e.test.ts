import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack } from '../harness/stack.js';
import { selfSignedCert, startUpstream, type Upstream, trustFile } from '../harness/upstream.js';

const { natsUrl } = inject('infra');
const skip = natsUrl ? false : 'no NATS server reachable and no Docker';
const REQUESTS = 30;

describe.skipIf(skip)(`webhooks survive kill -9 of the notifier${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let stack: Stack;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let api: ApiClient;
  let receiver: Upstream;
  let failing = true;

  beforeAll(async () => {
    db = await createTestDatabase();
    const cert = selfSignedCert();
    const caFile = trustFile(cert);
    // While `failing`, every delivery is answered 503 after a pause, so some are in flight when the notifier dies.
    receiver = await startUpstream({
      tls: cert,
      handler: (_req, res) => {
        if (!failing) return void res.writeHead(200).end();
        setTimeout(() => res.writeHead(503).end(), 150);
      },
    });
    stack = await startStack({
      mode: 'processes',
      databaseUrl: db.url,
      natsUrl,
      name: 'notifier-crash',
      env: {
        NODE_EXTRA_CA_CERTS: caFile,
        WEBHOOK_RETRY_SCHEDULE: Array(40).fill('0.5').join(','),
        WEBHOOK_TIMEOUT_MS: '2000',
      },
    });
    api = apiClient(stack.baseUrl);
  });
  afterAll(async () => {
    await stack?.stop();
    await receiver?.close();
    await db?.drop();
  });

  it('delivers every webhook once a new notifier starts: pending retries from Postgres, unconsumed events from JetStream', async () => {
    const acct = await api.newAccount();
    const device = api.device(acct.device_id);
    const ids: string[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const r = await api.agent(acct.api_key).post('/actions', {
        action_type: 'purchase',
        title: `Order ${i}`,
        amount: 10 + i,
        callback_url: `${receiver.origin}/hook`,
      });
      expect(r.status).toBe(200);
      ids.push(r.body.id);
    }
    const half = REQUESTS / 2;
    // First half: approved while the receiver fails, so their deliveries wait in the notifier's retry table.
    for (const id of ids.slice(0, half)) expect((await device.post(`/actions/${id}/approve`)).status).toBe(200);
    const attemptsFor = (id: string) => receiver.seen.filter((r) => r.body.includes(`"id":"${id}"`));
    await expect
      .poll(() => ids.slice(0, half).every((id) => attemptsFor(id).length >= 1), { timeout: 15_000 })
      .toBe(true);

    const [notifier] = stack.processes('notifier');
    const exited = new Promise((r) => notifier!.once('exit', r));
    notifier!.kill('SIGKILL');
    await exited;

    // Second half: resolved while no notifier runs; their events wait in the JetStream stream.
    for (const id of ids.slice(half)) expect((await device.post(`/actions/${id}/deny`)).status).toBe(200);
    const [{ count: unconsumedBefore }] =
      await db.sql`select count(*)::int as count from notifier.deliveries where request_id = any(${ids.slice(half)})`;
    expect(unconsumedBefore).toBe(0);

    failing = false;
    await stack.addProcess('notifier');
    await expect
      .poll(
        async () =>
          Number(
            (
              await db.sql`select count(*)::int as n from notifier.deliveries where state = 'delivered' and request_id = any(${ids})`
            )[0]!.n,
          ),
        { timeout: 30_000, interval: 250 },
      )
      .toBe(REQUESTS);

    for (const id of ids) {
      const arrivals = attemptsFor(id);
      expect(arrivals.length).toBeGreaterThan(0);
      // One webhook-id per event, on every attempt, and every arrival verifiably signed.
      expect(new Set(arrivals.map((a) => a.headers['webhook-id'])).size).toBe(1);
      for (const a of arrivals) new Webhook(acct.webhook_secret).verify(a.body, a.headers as Record<string, string>);
    }
    // The last arrival of each was answered 200 (the receiver stopped failing before the new notifier started).
    const statuses =
      await db.sql`select d.request_id, bool_or(a.status_code = 200) as ok from notifier.deliveries d join notifier.attempts a using (webhook_id) where d.request_id = any(${ids}) group by d.request_id`;
    expect(statuses.filter((s) => s.ok)).toHaveLength(REQUESTS);
  }, 90_000);

  it('shares the work between notifier replicas (one durable consumer), each webhook delivered once', async () => {
    failing = false;
    const second = await stack.addProcess('notifier');
    const [first] = stack.processes('notifier').filter((p) => p.exitCode === null && p.signalCode === null);
    const acct = await api.newAccount();
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await api.agent(acct.api_key).post('/actions', {
        action_type: 'purchase',
        title: `Shared ${i}`,
        amount: 1,
        callback_url: `${receiver.origin}/hook`,
      });
      ids.push(r.body.id);
    }
    await Promise.all(ids.map((id) => api.device(acct.device_id).post(`/actions/${id}/approve`)));
    const attemptsFor = (id: string) => receiver.seen.filter((r) => r.body.includes(`"id":"${id}"`));
    await expect.poll(() => ids.every((id) => attemptsFor(id).length > 0), { timeout: 15_000 }).toBe(true);
    await new Promise((r) => setTimeout(r, 500));
    for (const id of ids) expect(attemptsFor(id)).toHaveLength(1);
    const deliveredBy = (child: typeof second) =>
      ids.filter((id) => stack.outputOf(child).includes(`"request_id":"${id}","attempt":1,"status":200`)).length;
    expect(deliveredBy(first!) + deliveredBy(second)).toBe(40);
    expect(deliveredBy(first!)).toBeGreaterThan(0);
    expect(deliveredBy(second)).toBeGreaterThan(0);
  }, 60_000);
});
