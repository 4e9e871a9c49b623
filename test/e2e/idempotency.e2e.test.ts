import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pino } from 'pino';
import { connectNatsBus } from '@agent-auth/bus';
import { actionsEndpoints, CreateActionBody, newActionOf, newId } from '@agent-auth/contracts';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', skip: false },
];

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`Idempotency-Key on POST /actions (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({
        mode,
        databaseUrl: db.url,
        natsUrl,
        name: 'idempotency',
        env: { FREE_PLAN_MONTHLY_ACTIONS: '100' },
      });
      api = apiClient(stack.baseUrl);
    });
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    const create = (apiKey: string, key: string | undefined, body: Record<string, unknown>) =>
      api.call('POST', '/actions', {
        body,
        headers: { 'x-api-key': apiKey, ...(key === undefined ? {} : { 'idempotency-key': key }) },
      });
    const used = async (deviceId: string) =>
      (await api.device(deviceId).get('/account')).body.actions_this_month as number;

    it('answers a repeated key with the first answer, marked as replayed, counted once', async () => {
      const acct = await api.newAccount();
      const key = randomUUID();
      const body = { action_type: 'purchase', title: 'one book', amount: 12.5, metadata: { isbn: '978-0' } };
      const first = await create(acct.api_key, key, body);
      expect(first.status).toBe(200);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      const again = await create(acct.api_key, key, body);
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual(first.body);
      expect(await used(acct.device_id)).toBe(1);
      expect((await api.agent(acct.api_key).get('/actions')).body.actions).toHaveLength(1);
      // Another agent's identical key is its own.
      const other = (await api.device(acct.device_id).post('/agents', { name: 'second' })).body as { api_key: string };
      const theirs = await create(other.api_key, key, body);
      expect(theirs.status).toBe(200);
      expect(theirs.body.id).not.toBe(first.body.id);
    });

    it('refuses the same key with a different body (422), and a malformed key (400)', async () => {
      const acct = await api.newAccount();
      const key = randomUUID();
      expect((await create(acct.api_key, key, { action_type: 'purchase', title: 'a' })).status).toBe(200);
      const changed = await create(acct.api_key, key, { action_type: 'purchase', title: 'b' });
      expect(changed.status).toBe(422);
      expect(changed.body).toMatchObject({
        code: 'idempotency_key_reused',
        detail: expect.stringMatching(/Idempotency-Key/),
      });
      const bad = await create(acct.api_key, 'é'.repeat(3), { action_type: 'purchase', title: 'a' }).catch(() => null);
      if (bad) expect(bad.status).toBe(400);
      const long = await create(acct.api_key, 'k'.repeat(256), { action_type: 'purchase', title: 'a' });
      expect(long).toMatchObject({ status: 400, body: { detail: expect.stringMatching(/^Idempotency-Key: /) } });
      expect(await used(acct.device_id)).toBe(1);
    });

    it('replays an error answer too, with its status', async () => {
      const acct = await api.newAccount();
      const key = randomUUID();
      const body = { action_type: 'purchase', title: 'zero', amount: 0.001 };
      const first = await create(acct.api_key, key, body);
      expect(first.status).toBe(400);
      const again = await create(acct.api_key, key, body);
      expect(again).toMatchObject({ status: 400, body: first.body });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    });

    it('makes 20 concurrent repeats of one key one request, one quota count and one spend', async () => {
      const acct = await api.newAccount();
      const device = api.device(acct.device_id);
      expect(
        (
          await device.post('/rules', {
            name: 'books',
            decision: 'auto_approve',
            action_type: 'purchase',
            amount_max_cents: 10_000,
          })
        ).status,
      ).toBe(200);
      expect((await device.post('/spending-limits', { period: 'daily', amount_limit: 1000 })).status).toBe(200);
      const key = randomUUID();
      const body = { action_type: 'purchase', title: 'racing book', amount: 40 };
      const answers = await Promise.all(Array.from({ length: 20 }, () => create(acct.api_key, key, body)));
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
      expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
      expect(answers.filter((a) => a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
      expect(answers[0]!.body.status).toBe('approved');
      expect((await api.agent(acct.api_key).get('/actions')).body.actions).toHaveLength(1);
      expect(await used(acct.device_id)).toBe(1);
      const summary = (await api.agent(acct.api_key).get('/agent/spending-summary')).body.summaries;
      expect(summary[0]).toMatchObject({ spent: 40 });
    });

    it('counts creates without a key each time', async () => {
      const acct = await api.newAccount();
      for (let i = 0; i < 3; i++)
        expect((await create(acct.api_key, undefined, { action_type: 'purchase', title: 'x' })).status).toBe(200);
      expect(await used(acct.device_id)).toBe(3);
      expect((await api.agent(acct.api_key).get('/actions')).body.actions).toHaveLength(3);
    });

    // The bus's resend of a create without a key (its first replica died or went silent) carries the action id the
    // gateway chose; here it is sent over the bus as the gateway sends it, while the first one is being stored too.
    if (mode === 'processes') {
      it('stores a create sent again under its action id once, counted once, with one spend', async () => {
        const acct = await api.newAccount();
        const device = api.device(acct.device_id);
        expect(
          (await device.post('/rules', { name: 'books', decision: 'auto_approve', action_type: 'purchase' })).status,
        ).toBe(200);
        expect((await device.post('/spending-limits', { period: 'daily', amount_limit: 1000 })).status).toBe(200);
        const agent = (await api.agent(acct.api_key).get('/agent/spending-summary')).body.agent_id as string;
        const bus = await connectNatsBus({
          url: natsUrl!,
          prefix: stack.prefix,
          timeoutMs: 10_000,
          name: 'gateway-retry',
          log: pino({ level: 'silent' }),
        });
        try {
          const actionId = newId('action');
          const payload = {
            agent: { account_id: acct.account_id, agent_id: agent },
            // As the gateway sends it: the body parsed by the contract (defaults filled in), as the bus message.
            action: newActionOf(CreateActionBody.parse({ action_type: 'purchase', title: 'retried book', amount: 30 })),
            action_id: actionId,
          };
          const send = () => bus.request(actionsEndpoints.create, payload, { requestId: randomUUID() });
          const answers = await Promise.all([send(), send(), send()]);
          const again = await send();
          for (const answer of [...answers, again]) {
            expect(answer).toMatchObject({ action: { id: actionId, status: 'approved' } });
          }
          expect(again.replayed).toBe(true);
          expect(await used(acct.device_id)).toBe(1);
          expect((await api.agent(acct.api_key).get('/actions')).body.actions).toHaveLength(1);
          const summary = (await api.agent(acct.api_key).get('/agent/spending-summary')).body.summaries;
          expect(summary[0]).toMatchObject({ spent: 30 });
        } finally {
          await bus.close();
        }
      });
    }
  });
}
