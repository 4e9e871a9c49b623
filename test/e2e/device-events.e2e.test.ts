import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { openEventStream } from '../harness/sse.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', skip: false },
];

/** Resolves with the promise's value, or fails the test after `ms` (a stream that never delivers must not hang). */
function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms)),
  ]);
}

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`device event stream end to end (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({
        mode,
        databaseUrl: db.url,
        natsUrl,
        name: 'device-events',
        env: { DEVICE_STREAM_HEARTBEAT_MS: '300' },
      });
      api = apiClient(stack.baseUrl);
    });
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    it('shows a device a new pending request and then its resolution, and nothing of other accounts', async () => {
      const acct = await api.newAccount();
      const stranger = await api.newAccount();
      const stream = await openEventStream(`${stack.baseUrl}/device/events`, { 'x-device-id': acct.device_id });
      try {
        expect(stream.status).toBe(200);
        const foreign = await api
          .agent(stranger.api_key)
          .post('/actions', { action_type: 'purchase', title: 'Not yours', amount: 1 });
        const created = await api
          .agent(acct.api_key)
          .post('/actions', { action_type: 'purchase', title: 'Buy a chair', amount: 80, risk_level: 'critical' });
        const seen = await within(
          5000,
          stream.next((e) => e.data.action?.id === created.body.id),
          'action.created',
        );
        expect(seen.event).toBe('action.created');
        expect(seen.id).toMatch(/^msg_/);
        expect(seen.data).toMatchObject({
          type: 'action.created',
          action: {
            id: created.body.id,
            status: 'pending',
            title: 'Buy a chair',
            risk_level: 'critical',
            amount: 80,
            currency: 'USD',
            expires_at: created.body.expires_at,
          },
        });

        await api.device(acct.device_id).post(`/actions/${created.body.id}/deny`);
        const resolved = await within(
          5000,
          stream.next((e) => e.event === 'action.resolved' && e.data.action.id === created.body.id),
          'action.resolved',
        );
        expect(resolved.data.action).toMatchObject({ status: 'denied', resolved_by: 'user' });
        await expect.poll(() => stream.comments.includes('heartbeat'), { timeout: 3000 }).toBe(true);
        expect(stream.events.some((e) => e.data.action?.id === foreign.body.id)).toBe(false);
      } finally {
        stream.close();
      }
    });

    it('every device of the account gets the events', async () => {
      const acct = await api.newAccount();
      const second = await api.device(acct.device_id).post('/devices', { device_name: 'tablet' });
      const streams = await Promise.all(
        [acct.device_id, second.body.device_id].map((d) =>
          openEventStream(`${stack.baseUrl}/device/events`, { 'x-device-id': d }),
        ),
      );
      try {
        const created = await api.agent(acct.api_key).post('/actions', { action_type: 'scheduling', title: 'Dentist' });
        for (const s of streams)
          await within(
            5000,
            s.next((e) => e.data.action?.id === created.body.id),
            'event on each device',
          );
      } finally {
        for (const s of streams) s.close();
      }
    });

    it('refuses a missing or unknown device id with 401 and {code, detail}', async () => {
      const missing = await api.call('GET', '/device/events');
      expect(missing.status).toBe(401);
      expect(missing.body).toEqual({ code: 'device_id_missing', detail: expect.stringMatching(/X-Device-Id/) });
      const unknown = await api.call('GET', '/device/events', { headers: { 'x-device-id': `dev_${'x'.repeat(32)}` } });
      expect(unknown.status).toBe(401);
    });

    it('answers push registration without a provider with 409, and reports no provider', async () => {
      const acct = await api.newAccount();
      const config = await api.device(acct.device_id).get('/device/push-config');
      expect(config.body).toEqual({ provider: null, vapid_public_key: null });
      const r = await api.device(acct.device_id).post('/device/push-subscriptions', {
        endpoint: 'https://push.example/abc',
        keys: { p256dh: 'BNc', auth: 'xyz' },
      });
      expect(r.status).toBe(409);
      const bad = await api.device(acct.device_id).post('/device/push-subscriptions', {
        endpoint: 'http://push.example/abc',
        keys: { p256dh: 'BNc', auth: 'xyz' },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.detail).toMatch(/^endpoint: /);
    });
  });
}
