// A burst of requests with a key the gateway has not seen yet (a new agent, a gateway just started, an expired cache
// entry) is authenticated with one lookup: the others wait for it, rather than each verifying the key's argon2 hash
// in the actions service (tens of milliseconds of CPU each, which held a burst's answers back by hundreds of ms).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient } from '../harness/http.js';
import { parseExposition, sampleValue } from '../harness/prometheus-text.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', skip: false },
];

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`authentication of a burst (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({ mode, databaseUrl: db.url, natsUrl, name: 'auth-burst' });
    });
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    /** How many times the gateway asked the actions service to authenticate an agent key, or a device. */
    const lookups = async (subject: string) => {
      const page = parseExposition(await (await fetch(`${new URL(stack.baseUrl).origin}/metrics`)).text());
      return sampleValue(page, 'agent_auth_bus_request_duration_seconds_count', { subject, outcome: 'ok' });
    };

    it('looks a new key up once for 24 simultaneous requests, and a new device once for its burst', async () => {
      const api = apiClient(stack.baseUrl);
      const account = await api.newAccount();
      const [agentsBefore, devicesBefore] = [
        await lookups('actions.authenticate_agent'),
        await lookups('actions.authenticate_device'),
      ];
      const agent = api.agent(account.api_key);
      const device = api.device(account.device_id);
      const answers = await Promise.all([
        ...Array.from({ length: 24 }, () => agent.get('/actions')),
        ...Array.from({ length: 12 }, () => device.get('/pending')),
      ]);
      expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200));
      expect((await lookups('actions.authenticate_agent')) - agentsBefore).toBe(1);
      expect((await lookups('actions.authenticate_device')) - devicesBefore).toBe(1);
      // A wrong key is refused for every request of its burst alike.
      const wrong = await Promise.all(
        Array.from({ length: 6 }, () => api.agent(`${account.api_key}x`).get('/actions')),
      );
      expect(wrong.map((r) => r.status)).toEqual(wrong.map(() => 401));
    });
  });
}
