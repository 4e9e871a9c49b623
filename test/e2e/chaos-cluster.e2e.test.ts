// Chaos on a NATS cluster: three nats-server processes with JetStream, the action event stream and its consumers at
// replication 3, two replicas of every service, under load (creates, approvals with held waits, webhooks, vault
// executions). The server leading the stream is killed -9 and started again; once it has caught up, the leader then
// is killed and started again. `npm test` runs a small load; `npm run chaos -- --cluster` a bigger one. It checks
// what agents rely on (every create answered once, no request lost or doubled, every webhook delivered under one id,
// every vault execution made once, every held wait answered with the approval) and prints one summary line.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionEventStreamName } from '@agent-auth/contracts';
import { createTestDatabase } from '../infra/database.js';
import { type ClusterNode, natsServerAvailable, startNatsCluster } from '../harness/nats-server.js';
import { type Call, callWithRetries } from '../harness/retrying-client.js';
import { secondSession } from '../harness/sessions.js';
import { startStack, type Stack } from '../harness/stack.js';
import { startUpstream, type Upstream } from '../harness/upstream.js';

const FULL = process.env.CHAOS_SCALE === 'full';
// Moderate on purpose: ten service processes and three NATS servers share the machine with other work.
const scale = FULL
  ? { createWorkers: 4, approvalWorkers: 2, vaultWorkers: 1, between: 150 }
  : { createWorkers: 2, approvalWorkers: 1, vaultWorkers: 1, between: 30 };
const skip = !natsServerAvailable()
  ? 'no nats-server binary for a private NATS cluster'
  : secondSession
    ? 'the embedded Postgres takes one connection at a time'
    : false;

interface Create extends Call {
  key: string;
  phase: string;
}

/** An approval the device made while the agent held a wait on the request. */
interface HeldApproval {
  id: string;
  approve: Call;
  held: Call;
}

interface VaultRun {
  key: string;
  id: string;
  execute?: Call;
}

/** The longest any client waited in one call beyond what it asked for (a held wait counts from the approval). */
function longestPause(calls: { creates: Create[]; held: HeldApproval[]; vault: VaultRun[] }): number {
  const spans = [
    ...calls.creates.map((c) => c.finishedAt - c.startedAt),
    ...calls.held.map((h) => h.approve.finishedAt - h.approve.startedAt),
    ...calls.held.map((h) => Math.max(0, h.held.finishedAt - h.approve.finishedAt)),
    ...calls.vault.flatMap((v) => (v.execute ? [v.execute.finishedAt - v.execute.startedAt] : [])),
  ];
  return Math.max(0, ...spans);
}

describe.skipIf(skip)(
  `chaos on a NATS cluster: a node killed -9, then another (${FULL ? 'full' : 'small'}${skip ? `; skipped: ${skip}` : ''})`,
  () => {
    let cluster: Awaited<ReturnType<typeof startNatsCluster>>;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let stack: Stack;
    let receiver: Upstream;
    let vaultApi: Upstream;
    let nc: NatsConnection;
    let jsm: JetStreamManager;
    const gateways: string[] = [];
    const creates: Create[] = [];
    const held: HeldApproval[] = [];
    const vaultRuns: VaultRun[] = [];
    const upstreamHits = new Map<string, number>();
    const recovery: Array<{ node: string; firstCreateMs: number; streamLeaderMs: number }> = [];
    let phase = 'steady';
    let apiKey = '';
    let deviceId = '';
    let accountId = '';
    let stopLoad = false;

    beforeAll(async () => {
      cluster = await startNatsCluster(3);
      db = await createTestDatabase();
      receiver = await startUpstream({ handler: (_req, res) => res.writeHead(204).end() });
      vaultApi = await startUpstream({
        handler: (req, res) => {
          const key = req.url.split('/').at(-1)!;
          upstreamHits.set(key, (upstreamHits.get(key) ?? 0) + 1);
          setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'), 50);
        },
      });
      stack = await startStack({
        mode: 'processes',
        databaseUrl: db.url,
        natsUrl: cluster.urls,
        name: 'chaos-cluster',
        env: {
          NATS_STREAM_REPLICAS: '3',
          BUS_TIMEOUT_MS: '8000',
          SWEEP_INTERVAL_MS: '500',
          RELAY_POLL_MS: '250',
          WEBHOOK_RETRY_SCHEDULE: '0.5,1,2,2,2,2,2,2,2,2',
          WEBHOOK_TIMEOUT_MS: '3000',
          DB_POOL_SIZE: '3',
        },
      });
      await Promise.all(['actions', 'policy', 'notifier', 'vault-executor'].map((s) => stack.addProcess(s)));
      gateways.push(stack.baseUrl, await stack.addGateway());
      nc = await connect({ servers: cluster.urls.split(',') });
      jsm = await jetstreamManager(nc);

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
      const post = (path: string, body: unknown) =>
        fetch(`${stack.baseUrl}${path}`, {
          method: 'POST',
          headers: { 'x-device-id': deviceId, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const rule = { name: 'small buys', decision: 'auto_approve', action_type: 'purchase', amount_max_cents: 500 };
      expect((await post('/rules', rule)).status).toBe(200);
      const credential = {
        service_name: 'cluster-api',
        credential_value: `sk_cluster_${randomUUID()}`,
        allowed_hosts: ['127.0.0.1'],
      };
      expect((await post('/vault/credentials', credential)).status).toBe(200);
    }, 240_000);

    afterAll(async () => {
      stopLoad = true;
      await nc?.close();
      await stack?.stop().catch(() => {});
      await cluster?.stop();
      await receiver?.close();
      await vaultApi?.close();
      await db?.drop();
    }, 60_000);

    const stream = () => actionEventStreamName(stack.prefix);
    const streamCluster = async () => (await jsm.streams.info(stream())).cluster;

    /** A create as an agent makes it: one Idempotency-Key, retried until answered below 500. */
    const create = async (body: Record<string, unknown>): Promise<Create> => {
      const key = randomUUID();
      const call = await callWithRetries(gateways, (base) =>
        fetch(`${base}/actions`, {
          method: 'POST',
          headers: { 'x-api-key': apiKey, 'idempotency-key': key, 'content-type': 'application/json' },
          body: JSON.stringify({ title: `cluster ${key}`, callback_url: `${receiver.origin}/hook`, ...body }),
          signal: AbortSignal.timeout(60_000),
        }),
      );
      const created = { ...call, key, phase };
      creates.push(created);
      return created;
    };

    const approve = (id: string, contentHash: unknown) =>
      callWithRetries(gateways, (base) =>
        fetch(`${base}/actions/${id}/approve`, {
          method: 'POST',
          headers: { 'x-device-id': deviceId, 'content-type': 'application/json' },
          body: JSON.stringify({ content_hash: contentHash }),
          signal: AbortSignal.timeout(60_000),
        }),
      );

    /** $1 purchases the rule approves at once. */
    const createWorker = async () => {
      while (!stopLoad) await create({ action_type: 'purchase', amount: 1, expires_in_seconds: 120 });
    };

    /** A request left to a person: the agent holds a wait on it while the device approves. */
    const approvalWorker = async () => {
      while (!stopLoad) {
        const created = await create({ action_type: 'communication', expires_in_seconds: 120 });
        const id = created.body.id as string | undefined;
        if (!id) continue;
        const waiting = callWithRetries(gateways, (base) =>
          fetch(`${base}/actions/${id}?wait=30`, {
            headers: { 'x-api-key': apiKey },
            signal: AbortSignal.timeout(60_000),
          }),
        );
        await sleep(200);
        const approval = await approve(id, created.body.content_hash);
        held.push({ id, approve: approval, held: await waiting });
      }
    };

    /** A vault call: created, approved by the device, executed against the loopback API. */
    const vaultWorker = async () => {
      while (!stopLoad) {
        const key = randomUUID();
        const created = await create({
          action_type: 'system',
          expires_in_seconds: 120,
          metadata: {
            vault_execute: true,
            service_name: 'cluster-api',
            method: 'POST',
            url: `${vaultApi.origin}/v/${key}`,
          },
        });
        const id = created.body.id as string | undefined;
        if (!id) continue;
        const run: VaultRun = { key, id };
        vaultRuns.push(run);
        const approval = await approve(id, created.body.content_hash);
        if (approval.status !== 200 && approval.status !== 409) continue;
        run.execute = await callWithRetries(gateways, (base) =>
          fetch(`${base}/vault/execute/${id}`, {
            method: 'POST',
            headers: { 'x-api-key': apiKey },
            signal: AbortSignal.timeout(60_000),
          }),
        );
      }
    };

    const more = async (count: number) => {
      const target = creates.length + count;
      while (creates.length < target) await sleep(50);
    };

    /** Kills the node, and measures until a create started after the kill is answered and the stream has a leader. */
    const killAndRecover = async (node: ClusterNode) => {
      phase = `kill ${node.name}`;
      const at = Date.now();
      await node.kill();
      const firstCreate = (async () => {
        for (;;) {
          const first = creates.find((c) => c.startedAt >= at && c.status === 200);
          if (first) return first.finishedAt - at;
          await sleep(50);
        }
      })();
      const streamLeader = (async () => {
        for (;;) {
          const leader = await streamCluster().then(
            (c) => c?.leader,
            () => undefined,
          );
          if (leader && leader !== node.name) return Date.now() - at;
          await sleep(100);
        }
      })();
      recovery.push({ node: node.name, firstCreateMs: await firstCreate, streamLeaderMs: await streamLeader });
    };

    /** Starts the node again and waits until it holds a current copy of the stream. */
    const restart = async (node: ClusterNode) => {
      await node.start();
      phase = `${node.name} back`;
      await expect
        .poll(
          async () => {
            const c = await streamCluster().catch(() => undefined);
            return c?.leader === node.name || !!c?.replicas?.some((r) => r.name === node.name && r.current);
          },
          { timeout: 60_000, interval: 250 },
        )
        .toBe(true);
    };

    it(
      'answers every create once, delivers every webhook, executes every vault call once and answers every held wait',
      async () => {
        const replicated = await streamCluster();
        expect(1 + (replicated?.replicas?.length ?? 0)).toBe(3);
        // The notifier's durable consumers keep the stream's replication.
        const consumerCopies: number[] = [];
        for await (const c of jsm.consumers.list(stream())) consumerCopies.push(1 + (c.cluster?.replicas?.length ?? 0));
        expect(consumerCopies.length).toBeGreaterThan(0);
        expect(consumerCopies).toEqual(consumerCopies.map(() => 3));
        const load = Promise.all([
          ...Array.from({ length: scale.createWorkers }, createWorker),
          ...Array.from({ length: scale.approvalWorkers }, approvalWorker),
          ...Array.from({ length: scale.vaultWorkers }, vaultWorker),
        ]);
        await more(scale.between);
        // First the server leading the stream; then, once it is back and current, whichever leads then (another).
        const first = cluster.nodes.find((n) => n.name === replicated?.leader)!;
        await killAndRecover(first);
        await more(scale.between);
        await restart(first);
        await more(scale.between);
        const leaderNow = (await streamCluster())?.leader;
        const second =
          cluster.nodes.find((n) => n.name === leaderNow && n !== first) ?? cluster.nodes.find((n) => n !== first)!;
        await killAndRecover(second);
        await more(scale.between);
        await restart(second);
        await more(scale.between);
        stopLoad = true;
        await load;

        const rows = await db.sql<Array<{ id: string; title: string; status: string }>>`
          select id, title, status from actions.requests where account_id = ${accountId}`;
        const storedTitles = new Map<string, number>();
        for (const r of rows) storedTitles.set(r.title, (storedTitles.get(r.title) ?? 0) + 1);
        const resolved = rows.filter((r) => r.status !== 'pending').map((r) => r.id);
        const webhookIds = () => {
          const byRequest = new Map<string, Set<string>>();
          for (const seen of receiver.seen) {
            const id = (JSON.parse(seen.body) as { id: string }).id;
            byRequest.set(id, (byRequest.get(id) ?? new Set()).add(String(seen.headers['webhook-id'])));
          }
          return byRequest;
        };
        await expect
          .poll(() => resolved.filter((id) => webhookIds().has(id)).length, { timeout: 120_000, interval: 500 })
          .toBe(resolved.length);

        const answered = creates.filter((c) => c.status === 200);
        // A retried execute whose first attempt got through is answered 409 already_executed: executed all the same.
        const wasExecuted = (r: VaultRun) =>
          r.execute?.status === 200 ||
          (r.execute?.status === 409 && r.execute.attempts.at(-1)?.code === 'already_executed');
        const executed = vaultRuns.filter(wasExecuted);
        const heldApproved = held.filter((h) => h.held.status === 200 && h.held.body.status === 'approved');
        const byRequest = webhookIds();
        const summary = {
          creates: creates.length,
          answeredOnce: new Set(answered.map((c) => c.body.id)).size,
          stored: rows.length,
          doubled: [...storedTitles.values()].filter((n) => n > 1).length,
          retried: creates.filter((c) => c.attempts.length > 1).length,
          approvals: held.length,
          heldWaitsAnswered: heldApproved.length,
          webhooks: `${resolved.filter((id) => byRequest.has(id)).length}/${resolved.length}`,
          webhookIdsChanged: [...byRequest.values()].filter((ids) => ids.size > 1).length,
          vaultExecutions: `${executed.length}/${vaultRuns.length}`,
          upstreamCalledTwice: vaultRuns.filter((r) => (upstreamHits.get(r.key) ?? 0) > 1).length,
          longestPauseMs: longestPause({ creates, held, vault: vaultRuns }),
          recovery: recovery.map(
            (r) => `${r.node}: first create ${r.firstCreateMs} ms, stream leader ${r.streamLeaderMs} ms`,
          ),
        };
        console.info(`chaos-cluster (${FULL ? 'full' : 'small'}): ${JSON.stringify(summary)}`);

        // Every create answered 200 once, stored once.
        expect(creates.filter((c) => c.status !== 200).map((c) => c.attempts)).toEqual([]);
        expect(summary.answeredOnce).toBe(creates.length);
        expect(rows.length).toBe(creates.length);
        expect(summary.doubled).toBe(0);
        for (const c of creates) expect(storedTitles.get(`cluster ${c.key}`), c.key).toBe(1);
        // Every webhook under one id; every held wait answered with the approval it waited for.
        expect(summary.webhookIdsChanged).toBe(0);
        expect(held.filter((h) => !heldApproved.includes(h)).map((h) => [h.approve.status, h.held])).toEqual([]);
        // Every vault call approved was executed, once: the upstream called once for each.
        expect(vaultRuns.length).toBeGreaterThan(0);
        expect(vaultRuns.filter((r) => !wasExecuted(r)).map((r) => r.execute)).toEqual([]);
        expect(vaultRuns.map((r) => upstreamHits.get(r.key) ?? 0)).toEqual(vaultRuns.map(() => 1));
      },
      FULL ? 900_000 : 420_000,
    );
  },
);
