import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', skip: false },
];

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`every error body carries a catalogue code beside its detail (${mode})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode, databaseUrl: db.url, natsUrl, name: 'error-codes' });
      api = apiClient(stack.baseUrl);
    });
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    it('codes the refusals of the gateway, of the services behind the bus, and of the router', async () => {
      const acct = await api.newAccount();
      const agent = api.agent(acct.api_key);
      const device = api.device(acct.device_id);
      expect(await agent.post('/actions', { title: 'no type' })).toMatchObject({
        status: 400,
        body: { code: 'invalid_request', detail: expect.stringMatching(/^action_type/) },
      });
      expect(await api.call('GET', '/actions')).toMatchObject({ status: 401, body: { code: 'api_key_missing' } });
      expect(await agent.get('/actions/act_missing')).toMatchObject({
        status: 404,
        body: { code: 'action_not_found' },
      });

      const created = await agent.post('/actions', { action_type: 'scheduling', title: 'Dentist' });
      await device.post(`/actions/${created.body.id}/deny`);
      expect(await device.post(`/actions/${created.body.id}/approve`)).toMatchObject({
        status: 409,
        body: { code: 'action_not_pending', detail: "Action request is 'denied', not pending" },
      });

      expect(await api.call('GET', '/nowhere')).toMatchObject({ status: 404, body: { code: 'route_not_found' } });
      const wrongMethod = await api.call('DELETE', '/actions', { headers: { 'x-api-key': acct.api_key } });
      expect(wrongMethod).toMatchObject({ status: 405, body: { code: 'method_not_allowed' } });
      expect(wrongMethod.headers.get('allow')).toMatch(/GET/);
      const notJson = await api.call('POST', '/actions', {
        raw: '{',
        headers: { 'x-api-key': acct.api_key, 'content-type': 'application/json' },
      });
      expect(notJson).toMatchObject({ status: 400, body: { code: 'malformed_json' } });
    });
  });
}
