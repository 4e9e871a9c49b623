// Chaos: creates and vault executions under load while service processes are killed -9 (one replica of each pair),
// NATS is restarted and Postgres crashes. `npm test` runs a small version; `npm run chaos` (CHAOS_SCALE=full) a bigger
// one, with every service type killed and replaced. Besides the invariants agents rely on, it holds every fault to what
// a client may see of it: no 5xx on any route for a replica kill or a NATS restart, no wait of a second or more for a
// replica kill, and for a Postgres restart a 503 that says when to retry (Retry-After). The report breaks every figure
// down by fault phase (a create, approval or execution belongs to the phase it ended in).
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { natsServerAvailable, startPrivateNats } from '../harness/nats-server.js';
import { postgresBinaries, startPrivatePostgres, type PrivatePostgres } from '../harness/postgres-server.js';
import { startStack, type Stack } from '../harness/stack.js';
import { startUpstream, type Upstream } from '../harness/upstream.js';

const FULL = process.env.CHAOS_SCALE === 'full';
const REPLICA_KILLS = ['actions', 'policy', 'notifier', 'vault-executor'];
const scale = FULL
  ? {
      workers: 12,
      vaultWorkers: 3,
      approvalWorkers: 4,
      between: 120,
      kills: [...REPLICA_KILLS, 'gateway'],
      replace: true,
    }
  : {
      workers: 6,
      vaultWorkers: 1,
      approvalWorkers: 2,
      between: 20,
      kills: ['actions', 'vault-executor', 'notifier', 'gateway'],
      replace: false,
    };
const binaries = postgresBinaries();
const skip = !natsServerAvailable()
  ? 'no nats-server binary for a private NATS'
  : 'missing' in binaries
    ? binaries.missing
    : false;

/** One HTTP call of the agent, as the client saw it: a status, or how the connection failed (status 0). */
interface Attempt {
  status: number;
  /** The error `code` of a 4xx/5xx answer, or the network error's (ECONNREFUSED: never reached the gateway). */
  code?: string;
  /** A network error's message (what cut the connection). */
  detail?: string;
  ms: number;
  /** The Retry-After header of a 503 answer. */
  retryAfter?: string;
}

/** A device's approval of a pending request, as the phone saw it (retried like the agent's calls). */
interface Approval {
  phase: string;
  startedAt: number;
  finishedAt: number;
  status: number;
  attempts: Attempt[];
}

interface Create {
  key: string;
  phase: string;
  startedAt: number;
  finishedAt: number;
  /** The final answer after the client's retries (0: none). */
  status: number;
  id?: string;
  /** The vault request's content hash, for the device's approval. */
  contentHash?: string;
  attempts: Attempt[];
}

/** One vault request: created, approved by the device, then executed against the loopback upstream. */
interface VaultRun {
  key: string;
  phase: string;
  id?: string;
  /** The device's approve calls, in order. */
  approveAttempts?: Attempt[];
  /** The execute calls the agent made, in order. */
  attempts: Attempt[];
  /** The final answer of the execute (0: none). */
  status: number;
  code?: string;
}

/** A refused connection never reached a gateway; any other network error may have cut a request in flight. */
const refusedCodes = new Set(['ECONNREFUSED']);

/** Gateways that refused a connection lately, skipped by every client until then (ms since epoch). */
const downUntil = new Map<string, number>();

/**
 * An HTTP call as the agent's client library makes it: on a 502/503/504 or a network error it retries with backoff
 * (the same Idempotency-Key for a create). It is given every gateway's address (as it would be a load balancer's
 * several addresses): after a network error it moves to the next one, and one that refused a connection is left
 * alone for 5 s.
 */
async function callWithRetries(
  gateways: string[],
  start: number,
  request: (base: string) => Promise<Response>,
): Promise<{ attempts: Attempt[]; status: number; body: Record<string, unknown> }> {
  const attempts: Attempt[] = [];
  let at = start;
  for (let attempt = 0; attempt < 20; attempt++) {
    for (let i = 0; i < gateways.length && (downUntil.get(gateways[at % gateways.length]!) ?? 0) > Date.now(); i++)
      at++;
    const base = gateways[at % gateways.length]!;
    const began = Date.now();
    try {
      const res = await request(base);
      const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
      attempts.push({
        status: res.status,
        code: typeof body.code === 'string' ? body.code : undefined,
        ms: Date.now() - began,
        retryAfter: res.headers.get('retry-after') ?? undefined,
      });
      if (res.status < 500) return { attempts, status: res.status, body };
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const code = cause?.code ?? (err as Error).name;
      attempts.push({ status: 0, code, detail: cause?.message, ms: Date.now() - began });
      if (refusedCodes.has(code)) downUntil.set(base, Date.now() + 5000);
      at++;
      continue; // another gateway at once
    }
    await sleep(Math.min(2000, 100 * 2 ** attempt));
  }
  return { attempts, status: attempts.at(-1)?.status ?? 0, body: {} };
}

/** Which of `children` holds the loopback TCP connection whose local port is `port` (Linux /proc), if any. */
function ownerOfPort(port: number, children: ChildProcess[]): ChildProcess | undefined {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[1]?.endsWith(`:${hex}`)) inodes.add(fields[9]!);
    }
  }
  return children.find((child) => {
    try {
      return readdirSync(`/proc/${child.pid}/fd`).some((fd) => {
        try {
          const target = readlinkSync(`/proc/${child.pid}/fd/${fd}`);
          return inodes.has(target.replace(/^socket:\[(\d+)\]$/, '$1'));
        } catch {
          return false;
        }
      });
    } catch {
      return false;
    }
  });
}

describe.skipIf(skip)(
  `chaos: kill -9, NATS and Postgres restarts under load (${FULL ? 'full' : 'small'}${skip ? `; skipped: ${skip}` : ''})`,
  () => {
    let pg: PrivatePostgres;
    let nats: Awaited<ReturnType<typeof startPrivateNats>>;
    let stack: Stack;
    let receiver: Upstream;
    let vaultApi: Upstream;
    let sql: postgres.Sql;
    const gateways: string[] = [];
    const gatewayChildren: ChildProcess[] = [];
    const creates: Create[] = [];
    const approvals: Approval[] = [];
    const vaultRuns: VaultRun[] = [];
    /** Upstream hits of each vault request, by the key in its path. */
    const upstreamHits = new Map<string, number>();
    /** The executor-side ports of the vault calls the upstream is answering now. */
    const callsInFlight = new Set<number>();
    const recovery = new Map<string, number>();
    const phases: string[] = ['steady'];
    let phase = 'steady';
    let apiKey = '';
    let deviceId = '';
    let accountId = '';
    const limitDollars = FULL ? 600 : 60;
    let stopLoad = false;
    let load: Promise<void> = Promise.resolve();

    beforeAll(async () => {
      if ('missing' in binaries) return;
      pg = await startPrivatePostgres(binaries.bin);
      nats = await startPrivateNats();
      receiver = await startUpstream({ handler: (_req, res) => res.writeHead(204).end() });
      // The API the vault calls: slow enough (150 ms) that a kill of an executor finds calls in flight.
      vaultApi = await startUpstream({
        handler: (req, res) => {
          const key = req.url.split('/').at(-1)!;
          upstreamHits.set(key, (upstreamHits.get(key) ?? 0) + 1);
          const port = res.socket?.remotePort ?? 0;
          callsInFlight.add(port);
          setTimeout(() => {
            callsInFlight.delete(port);
            res.writeHead(200, { 'content-type': 'application/json' }).end(`{"done":"${key}"}`);
          }, 150);
        },
      });
      stack = await startStack({
        mode: 'processes',
        databaseUrl: pg.url,
        natsUrl: nats.url,
        name: 'chaos',
        env: {
          // Short enough that a killed replica's requests in flight are resent soon, long enough that a machine
          // loaded by other work does not time requests out without any fault.
          BUS_TIMEOUT_MS: '8000',
          SWEEP_INTERVAL_MS: '500',
          WEBHOOK_RETRY_SCHEDULE: '0.5,1,2,2,2,2,2,2,2,2',
          WEBHOOK_TIMEOUT_MS: '3000',
          VAULT_CONNECT_TIMEOUT_MS: '1000',
          VAULT_RESPONSE_TIMEOUT_MS: '2000',
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
      deviceId = account.device_id;
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
      expect(
        (
          await post('/vault/credentials', {
            service_name: 'chaos-api',
            credential_value: `sk_chaos_${randomUUID()}`,
            allowed_hosts: ['127.0.0.1'],
          })
        ).status,
      ).toBe(200);
    }, 180_000);

    afterAll(async () => {
      stopLoad = true;
      await load.catch(() => {});
      await sql?.end();
      await stack?.stop();
      await nats?.stop();
      await receiver?.close();
      await vaultApi?.close();
      await pg?.stop();
    }, 60_000);

    /** A create as an agent makes it: one Idempotency-Key, retried by the client until answered below 500. */
    const create = async (body: Record<string, unknown>, key: string): Promise<Create> => {
      const startedAt = Date.now();
      const {
        attempts,
        status,
        body: answer,
      } = await callWithRetries(gateways, key.charCodeAt(0), (base) =>
        fetch(`${base}/actions`, {
          method: 'POST',
          headers: { 'x-api-key': apiKey, 'idempotency-key': key, 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(60_000),
        }),
      );
      const id = status === 200 ? (answer.id as string) : undefined;
      const contentHash = typeof answer.content_hash === 'string' ? answer.content_hash : undefined;
      // Counted under the phase it ended in: a create in flight when a fault struck counts under that fault.
      return { key, phase, startedAt, finishedAt: Date.now(), status, id, contentHash, attempts };
    };

    /** Workers creating without pause until stopped: mostly $1 purchases a rule approves, some left to a person. */
    const createWorker = async (worker: number) => {
      for (let i = 0; !stopLoad; i++) {
        const key = randomUUID();
        const pending = (i + worker) % 10 === 9;
        const body = {
          action_type: pending ? 'communication' : 'purchase',
          title: `chaos ${key}`,
          amount: pending ? undefined : 1,
          expires_in_seconds: 30,
          callback_url: `${receiver.origin}/hook`,
        };
        creates.push(await create(body, key));
      }
    };

    /** Workers asking for vault calls: create (counted with the creates), approve on the device, execute. */
    const vaultWorker = async () => {
      while (!stopLoad) {
        const key = randomUUID();
        const created = await create(
          {
            action_type: 'system',
            title: `chaos ${key}`,
            callback_url: `${receiver.origin}/hook`,
            expires_in_seconds: 60,
            metadata: {
              vault_execute: true,
              service_name: 'chaos-api',
              method: 'POST',
              url: `${vaultApi.origin}/v/${key}`,
              body: key,
            },
          },
          key,
        );
        creates.push(created);
        const run: VaultRun = { key, phase, id: created.id, attempts: [], status: 0 };
        vaultRuns.push(run);
        if (!created.id) continue;
        const approved = await approve(created.id, created.contentHash);
        approvals.push(approved);
        run.approveAttempts = approved.attempts;
        // A retried approval may find its first attempt's decision (409): approved either way, or the run stops.
        if (approved.status !== 200 && approved.status !== 409) {
          run.code = `approve ${approved.status}`;
          continue;
        }
        const executed = await callWithRetries(gateways, 1, (base) =>
          fetch(`${base}/vault/execute/${created.id}`, {
            method: 'POST',
            headers: { 'x-api-key': apiKey },
            signal: AbortSignal.timeout(60_000),
          }),
        );
        run.phase = phase; // the phase the execution ended in
        run.attempts = executed.attempts;
        run.status = executed.status;
        run.code = executed.attempts.at(-1)?.code;
      }
    };

    /** The device's approval of one request, retried like any client's call. */
    const approve = async (id: string, contentHash: string | undefined): Promise<Approval> => {
      const startedAt = Date.now();
      const { attempts, status } = await callWithRetries(gateways, id.charCodeAt(id.length - 1), (base) =>
        fetch(`${base}/actions/${id}/approve`, {
          method: 'POST',
          headers: { 'x-device-id': deviceId, 'content-type': 'application/json' },
          body: JSON.stringify({ content_hash: contentHash }),
          signal: AbortSignal.timeout(60_000),
        }),
      );
      return { phase, startedAt, finishedAt: Date.now(), status, attempts };
    };

    /** Workers asking for what a person decides (counted with the creates), approved at once on the device. */
    const approvalWorker = async () => {
      while (!stopLoad) {
        const key = randomUUID();
        const body = {
          action_type: 'communication',
          title: `chaos ${key}`,
          expires_in_seconds: 30,
          callback_url: `${receiver.origin}/hook`,
        };
        const created = await create(body, key);
        creates.push(created);
        if (created.id) approvals.push(await approve(created.id, created.contentHash));
      }
    };

    function startLoad(): Promise<void> {
      return Promise.all([
        ...Array.from({ length: scale.workers }, (_, w) => createWorker(w)),
        ...Array.from({ length: scale.vaultWorkers }, vaultWorker),
        ...Array.from({ length: scale.approvalWorkers }, approvalWorker),
      ]).then(() => {});
    }

    /** Waits for `count` more creates to finish. */
    const more = async (count: number) => {
      const target = creates.length + count;
      while (creates.length < target) await sleep(50);
    };

    /** Starts a fault phase: what starts from now on is counted under it. */
    const enter = (name: string) => {
      phase = name;
      phases.push(name);
      return Date.now();
    };

    /** Time from a fault to the first create that started after it and was answered 200. */
    const recovered = async (fault: string, at: number) => {
      const firstAfter = () =>
        creates.filter((c) => c.startedAt >= at && c.status === 200).sort((a, b) => a.finishedAt - b.finishedAt)[0];
      let first = firstAfter();
      while (!first) {
        await sleep(50);
        first = firstAfter();
      }
      recovery.set(fault, first.finishedAt - at);
    };

    it(
      'keeps every create answered once, every vault call made at most once, with no duplicate, overspend, stuck request or lost webhook',
      async () => {
        load = startLoad();
        await more(scale.between);
        const alive = (service: string) =>
          stack.processes(service).filter((c) => c.exitCode === null && c.signalCode === null);
        /** The executor making a vault call right now (the kill then finds a call in flight), or the first alive. */
        const busyExecutor = async () => {
          for (const until = Date.now() + 10_000; Date.now() < until; await sleep(5)) {
            for (const port of callsInFlight) {
              const owner = ownerOfPort(port, alive('vault-executor'));
              if (owner) return owner;
            }
          }
          return alive('vault-executor')[0]!;
        };
        for (const service of scale.kills) {
          const victim =
            service === 'gateway'
              ? gatewayChildren[0]!
              : service === 'vault-executor'
                ? await busyExecutor()
                : alive(service)[0]!;
          const at = enter(`kill ${service}`);
          victim.kill('SIGKILL');
          await recovered(phase, at);
          if (scale.replace) {
            if (service === 'gateway') gateways[0] = await stack.addGateway();
            else await stack.addProcess(service);
          }
          await more(scale.between);
        }
        let at = enter('NATS restart');
        await nats.stop();
        await sleep(500);
        await nats.start();
        await recovered(phase, at);
        await more(scale.between);
        at = enter('Postgres restart');
        await pg.crashAndRestart();
        await recovered(phase, at);
        await more(scale.between);
        stopLoad = true;
        await load;

        const rows = await sql<Array<{ id: string; title: string; status: string; amount_cents: string | null }>>`
          select id, title, status, amount_cents from actions.requests where account_id = ${accountId}`;
        const titles = new Map<string, number>();
        for (const r of rows) titles.set(r.title, (titles.get(r.title) ?? 0) + 1);
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
        const hooked = () => {
          const seen = new Set<string>();
          for (const r of receiver.seen) seen.add((JSON.parse(r.body) as { id: string }).id);
          return seen;
        };
        await expect
          .poll(() => resolved.filter((id) => hooked().has(id)).length, { timeout: 120_000, interval: 500 })
          .toBe(resolved.length);

        // The report, by phase.
        const seen = hooked();
        const resolvedIds = new Set(resolved);
        const report = phases.map((name) => {
          const mine = creates.filter((c) => c.phase === name);
          const failedAttempts = mine.flatMap((c) => c.attempts.filter((a) => a.status >= 500 || a.status === 0));
          const runs = vaultRuns.filter((r) => r.phase === name);
          const executeAttempts = runs.flatMap((r) => r.attempts);
          const tally = (list: Attempt[], pick: (a: Attempt) => boolean) => {
            const counts = new Map<string, number>();
            for (const a of list.filter(pick)) {
              const label = `${a.status || 'net'} ${a.code ?? ''}`.trim();
              counts.set(label, (counts.get(label) ?? 0) + 1);
            }
            return Object.fromEntries(counts);
          };
          const approved = approvals.filter((a) => a.phase === name);
          const approvalAttempts = approved.flatMap((a) => a.attempts);
          const createAttempts = mine.flatMap((c) => c.attempts);
          const longest = (list: Array<{ startedAt: number; finishedAt: number }>) =>
            list.reduce((most, c) => Math.max(most, c.finishedAt - c.startedAt), 0);
          return {
            phase: name,
            creates: mine.length,
            createLongestMs: longest(mine),
            createNon2xx: tally(createAttempts, (a) => a.status < 200 || a.status > 299),
            approvals: approved.length,
            approvalLongestMs: longest(approved),
            approvalNon2xx: tally(approvalAttempts, (a) => a.status < 200 || a.status > 299),
            approval5xx: approvalAttempts.filter((a) => a.status >= 500).length,
            // A 503 or 504 that does not say when to retry (every one should, Postgres restarting included).
            refusedWithoutRetryAfter: [...createAttempts, ...approvalAttempts].filter(
              (a) => (a.status === 503 || a.status === 504) && !a.retryAfter,
            ).length,
            answered200: mine.filter((c) => c.status === 200).length,
            client5xx: failedAttempts.filter((a) => a.status >= 500).length,
            connectionsCut: failedAttempts.filter((a) => a.status === 0 && !refusedCodes.has(a.code ?? '')).length,
            connectionsRefused: failedAttempts.filter((a) => a.status === 0 && refusedCodes.has(a.code ?? '')).length,
            clientRetries: mine.reduce((s, c) => s + c.attempts.length - 1, 0),
            failures: tally(failedAttempts, () => true),
            cutBy: [...new Set(failedAttempts.filter((a) => a.status === 0).map((a) => a.detail))],
            duplicates: mine.filter((c) => (titles.get(`chaos ${c.key}`) ?? 0) > 1).length,
            webhooksExpected: mine.filter((c) => c.id && resolvedIds.has(c.id)).length,
            webhooksDelivered: mine.filter((c) => c.id && resolvedIds.has(c.id) && seen.has(c.id)).length,
            vault: {
              runs: runs.length,
              executed200: runs.filter((r) => r.status === 200).length,
              answered409: runs.filter((r) => r.status === 409).length,
              approve5xx: runs.flatMap((r) => r.approveAttempts ?? []).filter((a) => a.status >= 500).length,
              execute5xx: executeAttempts.filter((a) => a.status >= 500).length,
              executeNet: executeAttempts.filter((a) => a.status === 0).length,
              other: tally(
                runs.map((r) => ({ status: r.status, code: r.code, ms: 0 })),
                (a) => a.status !== 200 && a.status !== 409,
              ),
              upstreamHitTwice: runs.filter((r) => (upstreamHits.get(r.key) ?? 0) > 1).length,
              // Consumed without the upstream ever being called: the approval lost.
              lost: runs.filter((r) => r.status === 409 && (upstreamHits.get(r.key) ?? 0) === 0).length,
            },
            recoveryMs: recovery.get(name) ?? null,
          };
        });
        console.info(
          `chaos (${FULL ? 'full' : 'small'}): creates ${creates.length}, stored ${rows.length}, quota counted ${usage?.actions}, ` +
            `approved $${approvedCents / 100} (policy ledger $${Number(spend!.cents) / 100}) of a $${limitDollars} limit, ` +
            `webhook deliveries ${receiver.seen.length}, vault runs ${vaultRuns.length}, upstream calls ${[...upstreamHits.values()].reduce((a, b) => a + b, 0)}\n` +
            report.map((r) => JSON.stringify(r)).join('\n'),
        );
        // What a client saw of each fault, in one table.
        const cell = (t: Record<string, number>) =>
          Object.entries(t)
            .map(([k, n]) => `${n}× ${k}`)
            .join(', ') || '—';
        console.info(
          [
            '| fault | creates | longest create wait | non-2xx on creates | approvals | longest approval wait | non-2xx on approvals | 5xx on vault executions |',
            '|---|---|---|---|---|---|---|---|',
            ...report.map(
              (r) =>
                `| ${r.phase} | ${r.creates} | ${r.createLongestMs} ms | ${cell(r.createNon2xx)} | ${r.approvals} | ` +
                `${r.approvalLongestMs} ms | ${cell(r.approvalNon2xx)} | ${r.vault.execute5xx} |`,
            ),
          ].join('\n'),
        );

        // Every create answered 200, exactly once per key, and stored once; quota and spend counted once.
        expect(creates.filter((c) => c.status !== 200).map((c) => c.attempts)).toEqual([]);
        expect(new Set(creates.map((c) => c.id)).size).toBe(creates.length);
        expect(report.map((r) => r.duplicates)).toEqual(report.map(() => 0));
        expect(rows.length).toBe(creates.length);
        expect(usage?.actions).toBe(rows.length);
        expect(approvedCents).toBeLessThanOrEqual(limitDollars * 100);
        expect(Number(spend!.cents)).toBeLessThanOrEqual(limitDollars * 100);
        // A vault call is made at most once, and an approval is used up only by a call that reached the upstream.
        expect(vaultRuns.length).toBeGreaterThan(0);
        expect(report.map((r) => [r.phase, r.vault.upstreamHitTwice, r.vault.lost])).toEqual(
          report.map((r) => [r.phase, 0, 0]),
        );
        for (const run of vaultRuns.filter((r) => r.id)) {
          expect([200, 409], `${run.key}: ${JSON.stringify(run.attempts)}`).toContain(run.status);
          if (run.status === 409) expect(run.code).toBe('already_executed');
        }
        // Kills of one replica of a pair are invisible to the agent: no 5xx on any create. A machine so loaded by
        // other work that creates time out with no fault at all (the steady phase) cannot show that; the kills are
        // then held to what the steady phase got.
        const steady = report[0]!;
        const replicaKills = report.filter((r) => REPLICA_KILLS.some((s) => r.phase === `kill ${s}`));
        const unseen = report.filter((r) => r.phase === 'NATS restart' || replicaKills.includes(r));
        expect(unseen.map((r) => [r.phase, Math.min(r.client5xx, steady.client5xx)])).toEqual(
          unseen.map((r) => [r.phase, r.client5xx]),
        );
        // The device's approvals and the agent's executions are retried like creates: no 5xx either.
        expect(unseen.map((r) => [r.phase, Math.min(r.approval5xx, steady.approval5xx)])).toEqual(
          unseen.map((r) => [r.phase, r.approval5xx]),
        );
        expect(unseen.map((r) => [r.phase, Math.min(r.vault.execute5xx, steady.vault.execute5xx)])).toEqual(
          unseen.map((r) => [r.phase, r.vault.execute5xx]),
        );
        // A killed replica costs a client well under a second: its requests in flight go to the other one at once. On a
        // machine so loaded that calls with no fault at all take half a second (the steady phase's 99th percentile), a
        // kill may add at most a second to that instead.
        const steadyCalls = [...creates, ...approvals]
          .filter((c) => c.phase === 'steady')
          .map((c) => c.finishedAt - c.startedAt)
          .sort((a, b) => a - b);
        const steadyP99 = steadyCalls[Math.floor(steadyCalls.length * 0.99)] ?? 0;
        const waitGoal = steadyP99 < 500 ? 1000 : steadyP99 + 1000;
        expect(replicaKills.map((r) => [r.phase, Math.max(r.createLongestMs, r.approvalLongestMs) < waitGoal])).toEqual(
          replicaKills.map((r) => [r.phase, true]),
        );
        // Postgres restarting: nothing written is lost (the counts above), and a client refused meanwhile is told when
        // to retry.
        expect(report.map((r) => [r.phase, r.refusedWithoutRetryAfter])).toEqual(report.map((r) => [r.phase, 0]));
        if (steady.client5xx + steady.approval5xx > 0 || waitGoal > 1000)
          console.warn(
            `chaos: with no fault, ${steady.client5xx + steady.approval5xx} 5xx and a 99th percentile wait of ${steadyP99} ms; the machine is overloaded, the kills are held to ${waitGoal} ms`,
          );
      },
      FULL ? 900_000 : 300_000,
    );
  },
);
