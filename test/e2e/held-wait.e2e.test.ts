import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { openEventStream, type SseStream } from '../harness/sse.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', skip: false },
];

/** Resolves with the promise's value, or fails the test after `ms` (a wait that never answers must not hang). */
function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms)),
  ]);
}

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(
    `held wait and agent event stream end to end (${mode}${skip ? `; skipped: ${skip}` : ''})`,
    () => {
      let stack: Stack;
      let db: Awaited<ReturnType<typeof createTestDatabase>>;
      // The agent waits through `waiting`; the holder decides through `deciding` (another gateway process over NATS).
      let deciding: ApiClient;
      let waiting: ApiClient;
      let waitingUrl: string;

      beforeAll(async () => {
        db = await createTestDatabase();
        stack = await startStack({
          mode,
          databaseUrl: db.url,
          natsUrl,
          name: 'held-wait',
          env: { DEVICE_STREAM_HEARTBEAT_MS: '300' },
        });
        deciding = apiClient(stack.baseUrl);
        waitingUrl = mode === 'processes' ? await stack.addGateway() : stack.baseUrl;
        waiting = apiClient(waitingUrl);
      });
      afterAll(async () => {
        await stack?.stop();
        await db?.drop();
      });

      const pendingRequest = async (apiKey: string, body: Record<string, unknown> = {}) => {
        const created = await deciding
          .agent(apiKey)
          .post('/actions', { action_type: 'purchase', title: 'Buy a lamp', amount: 40, ...body });
        expect(created.body.status).toBe('pending');
        return created.body as { id: string; expires_at: string };
      };

      it('holds GET /actions/{id}?wait=S until the holder approves through another gateway, then answers the full action', async () => {
        const acct = await deciding.newAccount();
        const request = await pendingRequest(acct.api_key);
        let answered = false;
        const held = waiting
          .agent(acct.api_key)
          .get(`/actions/${request.id}?wait=30`)
          .then((r) => {
            answered = true;
            return r;
          });
        // The wait is held: after a while it has not answered, the request being still pending.
        await new Promise((r) => setTimeout(r, 700));
        expect(answered).toBe(false);
        const approved = await deciding.device(acct.device_id).post(`/actions/${request.id}/approve`);
        expect(approved.status).toBe(200);
        const reply = await within(10_000, held, 'answer to the held wait');
        expect(reply.status).toBe(200);
        expect(reply.body).toMatchObject({
          id: request.id,
          status: 'approved',
          resolved_by: 'biometric',
          title: 'Buy a lamp',
          amount: 40,
          metadata: {},
        });
        expect(reply.body.resolved_at).toEqual(approved.body.resolved_at);
        // Answered from the resolution's event: exactly what a read shows now, receipt included.
        const read = await waiting.agent(acct.api_key).get(`/actions/${request.id}`);
        expect(reply.body).toEqual(read.body);
        expect(reply.body.receipt).toEqual(expect.any(String));

        // A denial's reason reaches a held wait the same way.
        const denied = await pendingRequest(acct.api_key);
        const heldDeny = waiting.agent(acct.api_key).get(`/actions/${denied.id}?wait=30`);
        await new Promise((r) => setTimeout(r, 300));
        await deciding.device(acct.device_id).post(`/actions/${denied.id}/deny`, { reason: 'too dear' });
        const deniedReply = await within(10_000, heldDeny, 'answer to the held wait on a denial');
        expect(deniedReply.body).toMatchObject({ status: 'denied', reason: 'too dear' });
        expect(deniedReply.body).toEqual((await waiting.agent(acct.api_key).get(`/actions/${denied.id}`)).body);
      });

      it('answers at once when the request is no longer pending, and still pending when S seconds pass', async () => {
        const acct = await deciding.newAccount();
        const request = await pendingRequest(acct.api_key);
        await deciding.device(acct.device_id).post(`/actions/${request.id}/deny`, { reason: 'not now' });
        const done = await waiting.agent(acct.api_key).get(`/actions/${request.id}?wait=60`);
        expect(done.body).toMatchObject({ status: 'denied', reason: 'not now' });

        const other = await pendingRequest(acct.api_key);
        const started = Date.now();
        const timedOut = await waiting.agent(acct.api_key).get(`/actions/${other.id}?wait=1`);
        expect(Date.now() - started).toBeGreaterThanOrEqual(950);
        expect(timedOut.status).toBe(200);
        expect(timedOut.body).toMatchObject({ id: other.id, status: 'pending' });
      });

      it('counts a held wait once against the rate limit', async () => {
        const acct = await deciding.newAccount();
        const request = await pendingRequest(acct.api_key);
        const before = await waiting.agent(acct.api_key).get(`/actions/${request.id}`);
        const held = await waiting.agent(acct.api_key).get(`/actions/${request.id}?wait=2`);
        expect(Number(held.headers.get('x-ratelimit-remaining'))).toBe(
          Number(before.headers.get('x-ratelimit-remaining')) - 1,
        );
      });

      it('refuses a wait outside 1-60 whole seconds with 400 naming wait', async () => {
        const acct = await deciding.newAccount();
        const request = await pendingRequest(acct.api_key);
        for (const bad of ['0', '61', 'abc', '1.5', '', '-3']) {
          const r = await waiting.agent(acct.api_key).get(`/actions/${request.id}?wait=${bad}`);
          expect(r.status, `wait=${bad}`).toBe(400);
          expect(r.body.detail, `wait=${bad}`).toMatch(/^wait: /);
        }
      });

      it("answers 404 at once to a wait on another agent's or another account's request", async () => {
        const acct = await deciding.newAccount();
        const second = await deciding.device(acct.device_id).post('/agents', { name: 'second agent' });
        const stranger = await deciding.newAccount();
        const request = await pendingRequest(acct.api_key);
        for (const key of [second.body.api_key as string, stranger.api_key]) {
          const r = await within(5000, waiting.agent(key).get(`/actions/${request.id}?wait=30`), '404');
          expect(r.status).toBe(404);
          expect(r.body.detail).toMatch(/not found/);
        }
      });

      it('answers expired when the request expires during the wait', { timeout: 70_000 }, async () => {
        const acct = await deciding.newAccount();
        const request = await pendingRequest(acct.api_key, { expires_in_seconds: 30 });
        const reply = await within(45_000, waiting.agent(acct.api_key).get(`/actions/${request.id}?wait=60`), 'expiry');
        expect(reply.body).toMatchObject({ id: request.id, status: 'expired', resolved_by: 'system' });
        expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(request.expires_at));
      });

      describe('GET /agent/events', () => {
        const streams: SseStream[] = [];
        const open = async (apiKey: string, headers: Record<string, string> = {}) => {
          const s = await openEventStream(`${waitingUrl}/agent/events`, { 'x-api-key': apiKey, ...headers });
          streams.push(s);
          return s;
        };
        afterAll(() => {
          for (const s of streams) s.close();
        });

        it("streams the outcomes of the agent's own requests only, as full action objects", async () => {
          const acct = await deciding.newAccount();
          const sibling = await deciding.device(acct.device_id).post('/agents', { name: 'sibling' });
          const stranger = await deciding.newAccount();
          const mine = await open(acct.api_key);
          const theirs = await open(sibling.body.api_key);
          expect(mine.status).toBe(200);

          // Created while the stream is open (its view is read then, and the resolution sent from the event) and
          // with metadata, which only a read through the actions service can show decrypted.
          const own = await pendingRequest(acct.api_key, { metadata: { order: 'A-17' }, recipient: 'lamps.example' });
          const siblings = await pendingRequest(sibling.body.api_key);
          const foreign = await pendingRequest(stranger.api_key);
          await deciding.device(acct.device_id).post(`/actions/${siblings.id}/approve`);
          await deciding.device(stranger.device_id).post(`/actions/${foreign.id}/approve`);
          await deciding.device(acct.device_id).post(`/actions/${own.id}/deny`, { reason: 'too dear' });

          const seen = await within(
            5000,
            mine.next((e) => e.data.id === own.id),
            'own resolution',
          );
          expect(seen.event).toBe('action.resolved');
          expect(seen.id).toMatch(/^msg_/);
          expect(seen.data).toMatchObject({
            id: own.id,
            agent_id: acct.agent_id,
            status: 'denied',
            reason: 'too dear',
            title: 'Buy a lamp',
            metadata: { order: 'A-17' },
          });
          // Exactly what the agent reads afterwards, receipt included.
          expect(seen.data).toEqual((await deciding.agent(acct.api_key).get(`/actions/${own.id}`)).body);
          await within(
            5000,
            theirs.next((e) => e.data.id === siblings.id),
            "the sibling's resolution on its own stream",
          );
          await expect.poll(() => mine.comments.includes('heartbeat'), { timeout: 3000 }).toBe(true);
          // Agent A never sees agent B's (or another account's) events, nor any creation.
          expect(mine.events.map((e) => e.data.id)).toEqual([own.id]);
          expect(theirs.events.map((e) => e.data.id)).toEqual([siblings.id]);
        });

        it('resumes after Last-Event-ID with the outcomes it missed, in order', async () => {
          const acct = await deciding.newAccount();
          const first = await open(acct.api_key);
          const a = await pendingRequest(acct.api_key);
          await deciding.device(acct.device_id).post(`/actions/${a.id}/approve`);
          const seenA = await within(
            5000,
            first.next((e) => e.data.id === a.id),
            'first outcome',
          );
          first.close();

          const witness = await open(acct.api_key);
          const b = await pendingRequest(acct.api_key);
          const c = await pendingRequest(acct.api_key);
          await deciding.device(acct.device_id).post(`/actions/${b.id}/approve`);
          await deciding.device(acct.device_id).post(`/actions/${c.id}/deny`);
          // Both are in the event stream by the time another stream saw the second.
          await within(
            5000,
            witness.next((e) => e.data.id === c.id),
            'outcomes published',
          );

          const resumed = await open(acct.api_key, { 'last-event-id': seenA.id! });
          await within(
            5000,
            resumed.next((e) => e.data.id === c.id),
            'replayed outcome',
          );
          const d = await pendingRequest(acct.api_key);
          await deciding.device(acct.device_id).post(`/actions/${d.id}/approve`);
          await within(
            5000,
            resumed.next((e) => e.data.id === d.id),
            'live outcome after the replay',
          );
          expect(resumed.events.map((e) => [e.data.id, e.data.status])).toEqual([
            [b.id, 'approved'],
            [c.id, 'denied'],
            [d.id, 'approved'],
          ]);

          const fresh = await open(acct.api_key);
          const e = await pendingRequest(acct.api_key);
          await deciding.device(acct.device_id).post(`/actions/${e.id}/deny`);
          await within(
            5000,
            fresh.next((x) => x.data.id === e.id),
            'live outcome',
          );
          expect(fresh.events.map((x) => x.data.id)).toEqual([e.id]);
        });

        it('answers HEAD at once with the stream headers and no body, and 401 without a key', async () => {
          const acct = await deciding.newAccount();
          const head = await within(
            5000,
            fetch(`${waitingUrl}/agent/events`, { method: 'HEAD', headers: { 'x-api-key': acct.api_key } }),
            'HEAD answer',
          );
          expect(head.status).toBe(200);
          expect(head.headers.get('content-type')).toMatch(/^text\/event-stream/);
          expect(await head.text()).toBe('');
          const missing = await waiting.call('GET', '/agent/events');
          expect(missing.status).toBe(401);
          expect(missing.body.detail).toMatch(/X-API-Key/);
        });
      });

      // Only a separate gateway can be stopped on its own while the rest of the stack keeps serving.
      if (mode === 'processes') {
        it('releases held waits at once when the gateway shuts down', async () => {
          const acct = await deciding.newAccount();
          const request = await pendingRequest(acct.api_key);
          const url = await stack.addGateway();
          const gateways = stack.processes('gateway');
          const third = gateways[gateways.length - 1]!;
          const held = apiClient(url).agent(acct.api_key).get(`/actions/${request.id}?wait=60`);
          await new Promise((r) => setTimeout(r, 700));
          third.kill('SIGTERM');
          const reply = await within(10_000, held, 'answer on shutdown');
          expect(reply.status).toBe(200);
          expect(reply.body).toMatchObject({ id: request.id, status: 'pending' });
        });
      }
    },
  );
}
