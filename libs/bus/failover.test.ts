import { randomBytes } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { confidential, defineEndpoint, type ReplyEnvelope, subjectOf } from '@agent-auth/contracts';
import { AppError } from '@agent-auth/errors';
import { createLogger } from '@agent-auth/logging';
import { metricsText } from '@agent-auth/metrics';
import { type Bus, type CallOutcomeStore, connectNatsBus, handle, handleOnce, onceByCall } from './index.js';

const log = createLogger({ service: 'failover-test', level: 'silent' });
const work = defineEndpoint(
  'failtest',
  'work',
  z.object({ ms: z.number() }),
  z.object({ resent: z.boolean(), callId: z.string() }),
);
const { natsUrl } = inject('infra');

/** How many requests of failtest.work this process sent again for `reason`, as /metrics shows it. */
async function resends(reason: string): Promise<number> {
  const line = (await metricsText())
    .split('\n')
    .find((l) => l.startsWith(`agent_auth_bus_resends_total{subject="failtest.work",reason="${reason}"}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/**
 * A replica that takes one request of `endpoint` and dies with it: it says nothing and its subscription goes. The
 * list fills with the `header` of each request it took.
 */
async function doomedReplica(prefix: string, endpoint: Parameters<typeof subjectOf>[1], header: string) {
  const doomed = await connect({ servers: natsUrl! });
  const taken: string[] = [];
  doomed.subscribe(subjectOf(prefix, endpoint), {
    queue: 'failtest',
    callback: (_err, msg) => {
      taken.push(msg.headers?.get(header) ?? '');
      void doomed.close();
    },
  });
  await doomed.flush();
  return taken;
}

describe.skipIf(!natsUrl)('requests that outlive a replica (NATS)', () => {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
  });

  const bus = async (prefix: string, timeoutMs = 5000): Promise<Bus> => {
    const b = await connectNatsBus({ url: natsUrl!, prefix, timeoutMs, name: 'failover-test', log });
    open.push(b);
    return b;
  };
  const serveWork = (b: Bus, seen: Array<{ resent: boolean }>) =>
    b.serve({
      name: 'failtest',
      version: '0.0.1',
      description: 'test',
      concurrency: 8,
      log,
      handlers: [
        handle(work, async ({ ms }, ctx) => {
          seen.push({ resent: ctx.resent === true });
          await new Promise((r) => setTimeout(r, ms));
          return { resent: ctx.resent === true, callId: ctx.callId ?? '' };
        }),
      ],
    });

  it('sends a request again, at once, when the replica that took it dies with it', async () => {
    const prefix = `fo${randomBytes(4).toString('hex')}`;
    const taken = await doomedReplica(prefix, work, 'x-call-id');
    const requester = await bus(prefix);
    const seen: Array<{ resent: boolean }> = [];
    const silentBefore = await resends('silent');
    const started = performance.now();
    const answer = requester.request(work, { ms: 0 });
    await expect.poll(() => taken.length).toBe(1);
    await serveWork(await bus(prefix), seen);
    const result = await answer;
    expect(performance.now() - started).toBeLessThan(1500);
    // The same call, sent again: the replica that serves it can tell.
    expect(result).toEqual({ resent: true, callId: taken[0] });
    expect(seen).toEqual([{ resent: true }]);
    // Counted where an operator sees failovers: by subject, and why it was sent again.
    expect(await resends('silent')).toBe(silentBefore + 1);
  });

  it("gives a confidential endpoint's call a key of its own, the same on its resend, and no other call one", async () => {
    const prefix = `fo${randomBytes(4).toString('hex')}`;
    const minted = confidential(defineEndpoint('failtest', 'mint', z.object({}), z.object({ key: z.string() })));
    const sentKeys = await doomedReplica(prefix, minted, 'x-call-key');
    const requester = await bus(prefix);
    const answer = requester.request(minted, {});
    await expect.poll(() => sentKeys.length).toBe(1);
    const seen: Array<string | undefined> = [];
    await (await bus(prefix)).serve({
      name: 'failtest',
      version: '0.0.1',
      description: 'test',
      concurrency: 8,
      log,
      handlers: [
        handle(minted, async (_req, ctx) => ({ key: ctx.callKey ?? '' })),
        handle(work, async (_req, ctx) => {
          seen.push(ctx.callKey);
          return { resent: false, callId: ctx.callId ?? '' };
        }),
      ],
    });
    expect(sentKeys[0]).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(await answer).toEqual({ key: sentKeys[0] });
    await requester.request(work, { ms: 0 });
    expect(seen).toEqual([undefined]);
  });

  it('waits for a replica that works long and says so, without sending the request again', async () => {
    const prefix = `fo${randomBytes(4).toString('hex')}`;
    const seen: Array<{ resent: boolean }> = [];
    await serveWork(await bus(prefix), seen);
    const result = await (await bus(prefix)).request(work, { ms: 1500 });
    expect(result.resent).toBe(false);
    expect(seen).toEqual([{ resent: false }]);
  });

  it('waits briefly for a replica to appear when none listens, then answers', async () => {
    const prefix = `fo${randomBytes(4).toString('hex')}`;
    const requester = await bus(prefix);
    const before = await resends('no_responders');
    const answer = requester.request(work, { ms: 0 });
    await new Promise((r) => setTimeout(r, 300));
    await serveWork(await bus(prefix), []);
    await expect(answer).resolves.toMatchObject({ callId: expect.any(String) });
    expect(await resends('no_responders')).toBeGreaterThan(before);
  });

  it('answers 503 at once to a probe when no replica listens', async () => {
    const prefix = `fo${randomBytes(4).toString('hex')}`;
    const started = performance.now();
    await expect((await bus(prefix)).request(work, { ms: 0 }, { replicaWaitMs: 0 })).rejects.toMatchObject({
      status: 503,
      code: 'service_unavailable',
    });
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('an effect answered once per call', () => {
  const effect = defineEndpoint('failtest', 'effect', z.object({ n: z.number() }), z.object({ made: z.number() }));
  const memoryStore = (): CallOutcomeStore => {
    const rows = new Map<string, ReplyEnvelope | null>();
    return {
      async take(callId) {
        if (rows.has(callId)) return false;
        rows.set(callId, null);
        return true;
      },
      async awaitOutcome(callId) {
        return rows.get(callId) ?? undefined;
      },
      async keep(callId, outcome) {
        rows.set(callId, outcome);
      },
      async forget(callId) {
        rows.delete(callId);
      },
    };
  };
  const ctx = (callId: string | undefined, resent = false) => ({ requestId: 'r', log, callId, resent });

  it('answers a send again with the first outcome, success or refusal, and runs a new call afresh', async () => {
    let made = 0;
    const bound = onceByCall(
      handleOnce(effect, async ({ n }) => {
        if (n < 0) throw new AppError(404, 'rule_not_found', 'gone');
        return { made: ++made };
      }),
      memoryStore(),
    );
    expect(await bound.handler({ n: 1 }, ctx('c1'))).toEqual({ made: 1 });
    expect(await bound.handler({ n: 1 }, ctx('c1', true))).toEqual({ made: 1 });
    expect(await bound.handler({ n: 1 }, ctx('c2'))).toEqual({ made: 2 });
    await expect(bound.handler({ n: -1 }, ctx('c3'))).rejects.toMatchObject({ status: 404 });
    await expect(bound.handler({ n: -1 }, ctx('c3', true))).rejects.toMatchObject({ status: 404, detail: 'gone' });
    // Without a call id (one process), the handler simply runs.
    expect(await bound.handler({ n: 1 }, ctx(undefined))).toEqual({ made: 3 });
    expect(made).toBe(3);
  });
});
