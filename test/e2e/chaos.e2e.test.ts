// Chaos: creates under load while service processes are killed -9 (one replica of each pair), NATS is restarted and
// Postgres crashes. `npm test` runs a small version; `npm run chaos` (CHAOS_SCALE=full) a bigger one, with every
// service type killed and replaced. The invariants are the ones agents rely on, never timings.
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { natsServerAvailable, startPrivateNats } from '../harness/nats-server.js';
import { postgresBinaries, startPrivatePostgres, type PrivatePostgres } from '../harness/postgres-server.js';
import { startStack, type Stack } from '../harness/stack.js';
import { startUpstream, type Upstream } from '../harness/upstream.js';

const FULL = process.env.CHAOS_SCALE === 'full';
const scale = FULL
  ? { workers: 12, between: 120, kills: ['actions', 'policy', 'notifier', 'vault-executor', 'gateway'], replace: true }
  : { workers: 6, between: 20, kills: ['actions', 'notifier', 'gateway'], replace: false };
const binaries = postgresBinaries();
const skip = !natsServerAvailable()
  ? 'no nats-server binary for a private NATS'
  : 'missing' in binaries
    ? binaries.missing
    : false;

interface Create {
  key: string;
  startedAt: number;
  finishedAt: number;
  /** The final answer after the client's retries (0: none). */
  status: number;
  id?: string;
  /** Answers of 5xx and network errors the retrying client saw before its final answer. */
  transient: number;
}

/** A client as an agent runs it: an Idempotency-Key per create, retries of 5xx and network errors, over two gateways. */
async function createOnce(
  gateways: string[],
  apiKey: string,
  body: Record<string, unknown>,
  key: string,
): Promise<Create> {
  const startedAt = Date.now();
  let transient = 0;
  let status = 0;
  let id: string | undefined;
  for (let attempt = 0; attempt < 20; attempt++) {
    const base = gateways[(attempt + key.charCodeAt(0)) % gateways.length]!;
    try {
      const res = await fetch(`${base}/actions`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'idempotency-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      });
      status = res.status;
      const answer = (await res.json().catch(() => ({}))) as { id?: string };
      if (status < 500) {
        id = answer.id;
        break;
      }
    } catch {
      status = 0;
    }
    transient++;
    await sleep(Math.min(2000, 100 * 2 ** attempt));
  }
  return { key, startedAt, finishedAt: Date.now(), status, id, transient };
}

describe.skipIf(skip)(
  `chaos: kill -9, NATS and Postgres restarts under load (${FULL ? 'full' : 'small'}${skip ? `; skipped: ${skip}` : ''})`,
  () => {
    let pg: PrivatePostgres;
    let nats: Awaited<ReturnType<typeof startPrivateNats>>;
    let stack: Stack;
    let receiver: Upstream;
    let sql: postgres.Sql;
    const gateways: string[] = [];
    const gatewayChildren: ChildProcess[] = [];
    const creates: Create[] = [];
    const recovery: Array<{ fault: string; ms: number }> = [];
    let apiKey = '';
    let accountId = '';
    const limitDollars = FULL ? 600 : 60;
    let stopLoad = false;
    let load: Promise<void> = Promise.resolve();

    beforeAll(async () => {
      if ('missing' in binaries) return;
      pg = await startPrivatePostgres(binaries.bin);
      nats = await startPrivateNats();
      receiver = await startUpstream({ handler: (_req, res) => res.writeHead(204).end() });
      stack = await startStack({
        mode: 'processes',
        databaseUrl: pg.url,
        natsUrl: nats.url,
        name: 'chaos',
        env: {
          BUS_TIMEOUT_MS: '4000',
          SWEEP_INTERVAL_MS: '500',
          WEBHOOK_RETRY_SCHEDULE: '0.5,1,2,2,2,2,2,2,2,2',
          WEBHOOK_TIMEOUT_MS: '3000',
        },
      });
      // Two replicas of each service, two gateways.
      await Promise.all(['actions', 'policy', 'notifier', 'vault-executor'].map((s) => stack.addProcess(s)));
      gateways.push(stack.baseUrl, await stack.addGateway());
      gatewayChildren.push(...stack.processes('gateway'));
      sql = postgres(pg.url, { max: 2, onnotice: () => {} });
      const account = await (
        await fetch(`${stack.baseUrl}/accounts`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        })
      ).json();
      apiKey = account.api_key;
      accountId = account.account_id;
      const device = { 'x-device-id': account.device_id, 'content-type': 'application/json' };
      const post = (path: string, body: unknown) =>
        fetch(`${stack.baseUrl}${path}`, { method: 'POST', headers: device, body: JSON.stringify(body) });
      expect(
        (
          await post('/rules', {
            name: 'small buys',
            decision: 'auto_approve',
            action_type: 'purchase',
            amount_max_cents: 500,
          })
        ).status,
      ).toBe(200);
      expect((await post('/spending-limits', { period: 'daily', amount_limit: limitDollars })).status).toBe(200);
    }, 180_000);

    afterAll(async () => {
      stopLoad = true;
      await load.catch(() => {});
      await sql?.end();
      await stack?.stop();
      await nats?.stop();
      await receiver?.close();
      await pg?.stop();
    }, 60_000);

    /** Workers creating without pause until stopped: mostly $1 purchases a rule approves, some left to a person. */
    function startLoad(): Promise<void> {
      let n = 0;
      const worker = async () => {
        while (!stopLoad) {
          const i = n++;
          const key = randomUUID();
          const pending = i % 10 === 9;
          const body = {
            action_type: pending ? 'communication' : 'purchase',
            title: `chaos ${key}`,
            amount: pending ? undefined : 1,
            expires_in_seconds: 30,
            callback_url: `${receiver.origin}/hook`,
          };
          creates.push(await createOnce(gateways, apiKey, body, key));
        }
      };
      return Promise.all(Array.from({ length: scale.workers }, worker)).then(() => {});
    }

    /** Waits for `count` more creates to finish. */
    const more = async (count: number) => {
      const target = creates.length + count;
      while (creates.length < target) await sleep(50);
    };

    /** Time from a fault to the first create that started after it and succeeded. */
    const recovered = async (fault: string, at: number) => {
      const firstAfter = () =>
        creates.filter((c) => c.startedAt >= at && c.status === 200).sort((a, b) => a.finishedAt - b.finishedAt)[0];
      let first = firstAfter();
      while (!first) {
        await sleep(50);
        first = firstAfter();
      }
      recovery.push({ fault, ms: first.finishedAt - at });
    };

    it(
      'keeps every create answered once, with no duplicate, overspend, stuck request or lost webhook',
      async () => {
        load = startLoad();
        await more(scale.between);
        for (const service of scale.kills) {
          const victim =
            service === 'gateway'
              ? gatewayChildren[0]!
              : stack.processes(service).find((c) => c.exitCode === null && c.signalCode === null)!;
          const at = Date.now();
          victim.kill('SIGKILL');
          await recovered(`kill -9 ${service}`, at);
          if (scale.replace) {
            if (service === 'gateway') gateways[0] = await stack.addGateway();
            else await stack.addProcess(service);
          }
          await more(scale.between);
        }
        let at = Date.now();
        await nats.stop();
        await sleep(500);
        await nats.start();
        await recovered('NATS restart', at);
        await more(scale.between);
        at = Date.now();
        await pg.crashAndRestart();
        await recovered('Postgres crash and restart', at);
        await more(scale.between);
        stopLoad = true;
        await load;

        // Every create answered 200, exactly once per key, and stored once.
        const failed = creates.filter((c) => c.status !== 200);
        const transient = creates.reduce((sum, c) => sum + c.transient, 0);
        const rows = await sql<Array<{ id: string; title: string; status: string; amount_cents: string | null }>>`
      select id, title, status, amount_cents from actions.requests where account_id = ${accountId}`;
        const titles = new Map<string, number>();
        for (const r of rows) titles.set(r.title, (titles.get(r.title) ?? 0) + 1);
        const duplicates = [...titles.values()].filter((n) => n > 1).length;
        const approvedCents = rows
          .filter((r) => r.status === 'approved')
          .reduce((s, r) => s + Number(r.amount_cents ?? 0), 0);
        const [usage] = await sql<
          Array<{ actions: number }>
        >`select actions from actions.monthly_usage where account_id = ${accountId}`;
        const [spend] = await sql<
          Array<{ cents: string }>
        >`select coalesce(sum(amount_cents), 0)::text as cents from policy.spend where account_id = ${accountId}`;

        // No request left pending past its expiry (the sweeper runs every 500 ms).
        await expect
          .poll(
            async () =>
              (
                await sql`select 1 from actions.requests where status = 'pending' and expires_at < now() - interval '3 seconds'`
              ).length,
            { timeout: 30_000 },
          )
          .toBe(0);
        // Every resolved request with a callback has its webhook.
        const resolved = (
          await sql<
            Array<{ id: string }>
          >`select id from actions.requests where account_id = ${accountId} and status <> 'pending'`
        ).map((r) => r.id);
        const delivered = () => {
          const seen = new Set<string>();
          for (const r of receiver.seen) seen.add((JSON.parse(r.body) as { id: string }).id);
          return resolved.filter((id) => seen.has(id)).length;
        };
        await expect.poll(delivered, { timeout: 120_000, interval: 500 }).toBe(resolved.length);

        console.info(
          `chaos (${FULL ? 'full' : 'small'}): creates sent ${creates.length}, answered 200 ${creates.length - failed.length}, ` +
            `client-visible 5xx/network errors retried ${transient}, final failures ${failed.length}, duplicates ${duplicates}, ` +
            `stored ${rows.length}, quota counted ${usage?.actions}, approved $${approvedCents / 100} (policy ledger $${Number(spend!.cents) / 100}) ` +
            `of a $${limitDollars} limit, webhooks expected ${resolved.length} delivered ${delivered()} (deliveries ${receiver.seen.length}); ` +
            `recovery: ${recovery.map((r) => `${r.fault} ${r.ms} ms`).join(', ')}`,
        );
        expect(failed.map((c) => c.status)).toEqual([]);
        expect(new Set(creates.map((c) => c.id)).size).toBe(creates.length);
        expect(duplicates).toBe(0);
        expect(rows.length).toBe(creates.length);
        expect(usage?.actions).toBe(rows.length);
        expect(approvedCents).toBeLessThanOrEqual(limitDollars * 100);
        expect(Number(spend!.cents)).toBeLessThanOrEqual(limitDollars * 100);
      },
      FULL ? 900_000 : 240_000,
    );
  },
);
