import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createInProcessBus, handle, type Bus } from '@agent-auth/bus';
import { loadConfig } from '@agent-auth/config';
import { actionsEndpoints, identityEndpoints, policyEndpoints, vaultEndpoints } from '@agent-auth/contracts';
import { createGateway } from '../index.js';

describe('GET /readyz', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => close?.());

  async function gatewayWith(serve: (bus: Bus) => Promise<unknown>) {
    const bus = createInProcessBus({ prefix: 'ready', timeoutMs: 500 });
    await serve(bus);
    const app = await createGateway({
      bus,
      config: { ...loadConfig({}), RATE_LIMITS: false },
      log: pino({ level: 'silent' }),
    });
    close = () => app.close();
    return app;
  }
  const healthOf = (bus: Bus, name: string, endpoint: typeof actionsEndpoints.health) =>
    bus.serve({
      name,
      version: '0.0.1',
      description: name,
      handlers: [handle(endpoint, async () => ({ ok: true as const }))],
      concurrency: 4,
      log: pino({ level: 'silent' }),
    });

  it('is ready when actions and policy answer, and names each service, the optional ones included', async () => {
    const app = await gatewayWith(async (bus) => {
      await healthOf(bus, 'actions', actionsEndpoints.health);
      await healthOf(bus, 'policy', policyEndpoints.health);
      await healthOf(bus, 'vault', vaultEndpoints.health);
      await healthOf(bus, 'identity', identityEndpoints.health);
    });
    const res = await app.inject({ url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      status: 'ready',
      services: {
        actions: 'ok',
        policy: 'ok',
        vault: 'ok',
        identity: 'ok',
        notifier: expect.stringMatching(/^unavailable: /),
      },
    });
  });

  it('is 503 naming what is missing when policy does not answer', async () => {
    const app = await gatewayWith(async (bus) => healthOf(bus, 'actions', actionsEndpoints.health));
    const res = await app.inject({ url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({
      detail: 'Not ready: policy not answering',
      services: {
        actions: 'ok',
        policy: expect.stringMatching(/^unavailable/),
        identity: expect.stringMatching(/^unavailable/),
      },
    });
    expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
  });
});
