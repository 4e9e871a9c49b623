import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack } from '../harness/stack.js';
import { startUpstream, type Upstream } from '../harness/upstream.js';

const { natsUrl } = inject('infra');
const skip = natsUrl ? false : 'no NATS server reachable and no Docker';

// One door out: the notifier's webhooks leave through the vault executor (OUTBOUND_VIA's default), so with no
// executor running none arrives, and the retry after one starts delivers it.
describe.skipIf(skip)(`outbound calls leave through the vault executor${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let stack: Stack;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let api: ApiClient;
  let receiver: Upstream;

  beforeAll(async () => {
    db = await createTestDatabase();
    receiver = await startUpstream({ handler: (_req, res) => void res.writeHead(200).end() });
    stack = await startStack({
      mode: 'processes',
      databaseUrl: db.url,
      natsUrl,
      name: 'egress-relay',
      env: { WEBHOOK_RETRY_SCHEDULE: Array(20).fill('0.5').join(','), WEBHOOK_TIMEOUT_MS: '2000' },
    });
    api = apiClient(stack.baseUrl);
  });
  afterAll(async () => {
    await stack?.stop();
    await receiver?.close();
    await db?.drop();
  });

  it('a webhook waits while no vault executor runs, and arrives through the one that starts', async () => {
    const acct = await api.newAccount();
    const device = api.device(acct.device_id);
    for (const executor of stack.processes('vault-executor')) {
      const exited = new Promise((resolve) => executor.once('exit', resolve));
      executor.kill('SIGKILL');
      await exited;
    }
    const created = await api.agent(acct.api_key).post('/actions', {
      action_type: 'purchase',
      title: 'Order paper',
      amount: 12,
      callback_url: `${receiver.origin}/hook`,
    });
    expect(created.status).toBe(200);
    const id = created.body.id as string;
    expect((await device.post(`/actions/${id}/approve`)).status).toBe(200);

    const attempts = () =>
      db.sql`select a.error, a.outcome from notifier.attempts a join notifier.deliveries d using (webhook_id)
             where d.request_id = ${id} order by a.attempt`;
    await expect.poll(async () => (await attempts()).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
    expect(receiver.seen.filter((r) => r.body.includes(id))).toHaveLength(0);
    expect((await attempts())[0]).toMatchObject({
      outcome: 'retrying',
      error: 'the outbound relay (the vault executor) did not answer',
    });

    await stack.addProcess('vault-executor');
    await expect.poll(() => receiver.seen.filter((r) => r.body.includes(id)).length, { timeout: 15_000 }).toBe(1);
    // The attempt is recorded once the receiver's answer is back: a moment after the request arrived.
    await expect
      .poll(async () => (await attempts()).at(-1), { timeout: 5_000 })
      .toMatchObject({
        outcome: 'delivered',
        error: null,
      });
  });
});
