import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient } from '../harness/http.js';
import {
  operationsOf,
  requestOf,
  type FuzzContext,
  type FuzzRequest,
  type Operation,
} from '../harness/openapi-fuzz.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', skip: false },
];
// Requests per run mode (2,000 a CI run); FUZZ_RUNS=5000 for a 10,000-request run.
const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
// The one timing bound of the suite, generous on purpose: a reply lost on the bus shows as a 10 s wait.
const SLOWEST_MS = 2000;

interface Seen {
  status: number;
  ms: number;
  body: unknown;
}

async function send(baseUrl: string, req: FuzzRequest): Promise<Seen> {
  const started = performance.now();
  const res = await fetch(baseUrl + req.path, {
    method: req.method,
    headers: req.headers,
    body: req.body,
    signal: AbortSignal.timeout(15_000),
  });
  // A stream (GET /device/events, /agent/events) never ends: its answer is its status and headers.
  if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
    await res.body?.cancel();
    return { status: res.status, ms: performance.now() - started, body: undefined };
  }
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* kept as text: the assertion says what came back */
  }
  return { status: res.status, ms: performance.now() - started, body };
}

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(
    `fuzz over every route of the OpenAPI document (${mode}${skip ? `; skipped: ${skip}` : ''})`,
    () => {
      let stack: Stack;
      let db: Awaited<ReturnType<typeof createTestDatabase>>;
      let ops: Operation[];
      let ctx: FuzzContext;

      beforeAll(async () => {
        db = await createTestDatabase();
        // The harness's rate limits (10,000 a window) leave room for every request of a run up to 5,000 per mode.
        stack = await startStack({ mode, databaseUrl: db.url, natsUrl, name: 'fuzz' });
        const api = apiClient(stack.baseUrl);
        const acct = await api.newAccount();
        const device = api.device(acct.device_id);
        const action = await api
          .agent(acct.api_key)
          .post('/actions', { action_type: 'purchase', title: 'fuzz target', amount: 5 });
        const rule = await device.post('/rules', { name: 'fuzz rule', decision: 'auto_deny', action_type: 'legal' });
        const limit = await device.post('/spending-limits', { period: 'daily', amount_limit: 100 });
        const cred = await device.post('/vault/credentials', {
          service_name: 'fuzz-api',
          credential_value: 'sk_fuzz',
          allowed_hosts: ['127.0.0.1'],
        });
        const spare = await device.post('/agents', { name: 'spare' });
        for (const r of [action, rule, limit, cred, spare])
          if (r.status !== 200) console.warn('fuzz setup', r.status, JSON.stringify(r.body));
        ctx = {
          apiKey: acct.api_key,
          deviceId: acct.device_id,
          ids: [
            action.body.id,
            rule.body.rule_id,
            limit.body.limit_id,
            cred.body.credential_id,
            spare.body.agent_id,
          ].filter((x) => typeof x === 'string'),
        };
        const doc = await (await fetch(new URL('/openapi.json', stack.baseUrl))).json();
        ops = operationsOf(doc);
      });
      afterAll(async () => {
        await stack?.stop();
        await db?.drop();
      });

      it('covers every operation of the document', () => {
        expect(ops.length).toBeGreaterThan(25);
        expect(ctx.ids).toHaveLength(5);
      });

      it(`answers ${RUNS} generated requests without a 5xx, each error with detail and code, none slower than ${SLOWEST_MS} ms`, async () => {
        let sent = 0;
        let serverErrors = 0;
        let slowest = 0;
        const byStatus = new Map<number, number>();
        await fc.assert(
          fc.asyncProperty(requestOf(ops, ctx), async (req) => {
            const seen = await send(stack.baseUrl, req);
            sent++;
            slowest = Math.max(slowest, seen.ms);
            byStatus.set(seen.status, (byStatus.get(seen.status) ?? 0) + 1);
            if (seen.status >= 500) serverErrors++;
            const what = `${req.method} ${req.path} → ${seen.status} ${JSON.stringify(seen.body)?.slice(0, 300)}`;
            expect(seen.status, what).toBeLessThan(500);
            expect(seen.ms, what).toBeLessThan(SLOWEST_MS + req.holdsMs);
            if (seen.status >= 400 && req.method !== 'HEAD') {
              expect(seen.body, what).toMatchObject({ detail: expect.any(String), code: expect.any(String) });
            }
          }),
          { numRuns: RUNS, endOnFailure: true },
        );
        console.info(
          `fuzz (${mode}): ${sent} requests, ${serverErrors} 5xx, slowest ${Math.round(slowest)} ms, statuses ${JSON.stringify(Object.fromEntries([...byStatus].sort()))}`,
        );
        expect(sent).toBe(RUNS);
      }, 600_000);
    },
  );
}
