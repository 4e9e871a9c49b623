import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { connectNatsBus, createInProcessBus } from '@agent-auth/bus';
import { natsServerAvailable, startPrivateNats } from '../../../test/harness/nats-server.js';
import type { ActionView } from '@agent-auth/contracts';
import { createWaitRegistry, holdWhilePending } from './held-waits.js';

const at = new Date().toISOString();
const inAnHour = new Date(Date.now() + 3600_000).toISOString();
const view = (status: ActionView['status']) => ({ id: 'act_1', status, expires_at: inAnHour }) as ActionView;
const resolution = (id: string) => ({
  id: `msg_${Math.random().toString(36).slice(2)}`,
  type: 'action.resolved' as const,
  account_id: 'acc_1',
  agent_id: 'agt_1',
  callback_url: null,
  occurred_at: at,
  action: {
    id,
    status: 'approved' as const,
    action_type: 'purchase' as const,
    title: 't',
    risk_level: 'low' as const,
    amount: null,
    currency: 'USD',
    resolved_by: 'biometric',
    resolved_at: at,
    created_at: at,
    expires_at: inAnHour,
  },
});

async function setUp() {
  const bus = createInProcessBus({ prefix: 'held', timeoutMs: 1000 });
  // The in-process stream stores an event only once some consumer handles it (the notifier, in the real service).
  await bus.actionEvents.consume({ name: 'sink', concurrency: 10, log: undefined as never, handler: async () => {} });
  const registry = createWaitRegistry(bus.actionEvents);
  await registry.start();
  return { bus, registry };
}

describe('held waits', () => {
  it('sees a resolution that lands between registering and the first read (no lost wake-up)', async () => {
    const { bus, registry } = await setUp();
    let reads = 0;
    const answer = await holdWhilePending({
      registry,
      requestId: 'act_1',
      seconds: 30,
      read: async () => {
        if (++reads === 1) {
          // The first read saw the request pending, while its resolution was announced meanwhile.
          await bus.actionEvents.append([resolution('act_1')]);
          await new Promise((r) => setTimeout(r, 10));
          return view('pending');
        }
        return view('approved');
      },
    });
    expect(answer.status).toBe('approved');
    expect(reads).toBe(2);
    expect(registry.size()).toBe(0);
  });

  it('answers from a resolution that carries its outcome, without reading again', async () => {
    const { bus, registry } = await setUp();
    let reads = 0;
    const pending = { ...view('pending'), title: 'kept', reason: null, receipt: null } as ActionView;
    const waiting = holdWhilePending({
      registry,
      requestId: 'act_1',
      seconds: 30,
      read: async () => {
        reads++;
        return pending;
      },
    });
    await new Promise((r) => setTimeout(r, 20));
    const outcome = { reason: 'fine', user_verified: true, passkey_id: 'pk_1', quorum: null };
    await bus.actionEvents.append([
      { ...resolution('act_1'), action: { ...resolution('act_1').action, receipt: 'r' }, outcome },
    ]);
    const answer = await waiting;
    expect(reads).toBe(1);
    expect(answer).toMatchObject({
      id: 'act_1',
      title: 'kept',
      status: 'approved',
      resolved_by: 'biometric',
      resolved_at: at,
      receipt: 'r',
      ...outcome,
    });
  });

  it('is woken only by its own request, and answers the last read when S seconds pass', async () => {
    const { bus, registry } = await setUp();
    let reads = 0;
    const waiting = holdWhilePending({
      registry,
      requestId: 'act_1',
      seconds: 1,
      read: async () => {
        reads++;
        return view('pending');
      },
    });
    await new Promise((r) => setTimeout(r, 50));
    await bus.actionEvents.append([resolution('act_2')]);
    expect((await waiting).status).toBe('pending');
    expect(reads).toBe(2); // once at the start, once when the time was up
  });

  it('answers every held wait at once on shutdown, and does not hold new ones', async () => {
    const { registry } = await setUp();
    const waits = Array.from({ length: 100 }, (_, i) =>
      holdWhilePending({ registry, requestId: `act_${i % 10}`, seconds: 60, read: async () => view('pending') }),
    );
    await new Promise((r) => setTimeout(r, 20));
    expect(registry.size()).toBe(100);
    registry.stop();
    const answers = await Promise.all(waits);
    expect(answers.every((a) => a.status === 'pending')).toBe(true);
    expect(registry.size()).toBe(0);
    const late = await holdWhilePending({
      registry,
      requestId: 'act_1',
      seconds: 60,
      read: async () => view('pending'),
    });
    expect(late.status).toBe('pending');
  });

  it('lets go of a wait whose client went away', async () => {
    const { registry } = await setUp();
    let gone = () => {};
    const waiting = holdWhilePending({
      registry,
      requestId: 'act_1',
      seconds: 60,
      read: async () => view('pending'),
      onClientGone: (l) => (gone = l),
    });
    await new Promise((r) => setTimeout(r, 20));
    gone();
    await waiting;
    expect(registry.size()).toBe(0);
  });

  it.skipIf(!natsServerAvailable())(
    'reads every held request again when the bus reconnects (resolutions published meanwhile were missed)',
    async () => {
      const nats = await startPrivateNats();
      const bus = await connectNatsBus({
        url: nats.url,
        prefix: 'gap',
        timeoutMs: 1000,
        name: 'held-waits-test',
        log: pino({ level: 'silent' }),
      });
      try {
        const registry = createWaitRegistry(bus.actionEvents);
        await registry.start();
        let resolved = false;
        const began = Date.now();
        const waiting = holdWhilePending({
          registry,
          requestId: 'act_1',
          seconds: 60,
          read: async () => view(resolved ? 'approved' : 'pending'),
        });
        await new Promise((r) => setTimeout(r, 50));
        // Resolved while the server is away: no event reaches the registry, only the reconnection.
        await nats.stop();
        resolved = true;
        await nats.start();
        expect((await waiting).status).toBe('approved');
        expect(Date.now() - began).toBeLessThan(30_000);
        registry.stop();
      } finally {
        await bus.close();
        await nats.stop();
      }
    },
    45_000,
  );
});
