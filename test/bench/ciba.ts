// OpenID Connect CIBA in ping mode: from the holder's approve call to the client's token. Each request is made with
// POST /oauth/bc-authorize (client_notification_token given), approved by the device, pinged by the notifier at a
// loopback endpoint, and exchanged at POST /oauth/token at once: the time from the approve call's start to the
// token answer, p50 and p99 (goal: p99 under 100 ms), one request at a time and several at once. On the all-in-one
// process and on one process per service over NATS, where the ping crosses the event stream and the notifier.
import { startStack, type StackMode } from '../harness/stack.js';
import { apiClient } from '../harness/http.js';
import { startUpstream } from '../harness/upstream.js';
import { out, withDatabase, type BenchCase, type Infra } from './load.js';

const REQUESTS = Number(process.env.BENCH_CIBA_REQUESTS ?? 200);
const CONCURRENCY = (process.env.BENCH_CIBA_CONCURRENCY ?? '1,8').split(',').map(Number);
const P99_GOAL_MS = 100;
const GRANT = 'urn:openid:params:grant-type:ciba';

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;

interface Row {
  name: string;
  p50: number;
  p99: number;
  max: number;
  failed: number;
}

async function form(url: string, body: Record<string, string>, authorization: string) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
    body: new URLSearchParams(body).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

async function onStack(infra: Infra, mode: StackMode, databaseUrl: string): Promise<Row[]> {
  const waiters = new Map<string, () => void>();
  const pinger = await startUpstream({
    handler: (req, res) => {
      res.writeHead(204).end();
      const id = (JSON.parse(req.body) as { auth_req_id: string }).auth_req_id;
      waiters.get(id)?.();
    },
  });
  const stack = await startStack({
    mode,
    databaseUrl,
    natsUrl: infra.natsUrl,
    name: 'bench-ciba',
    env: { LOG_REQUESTS: 'false', DB_POOL_SIZE: '10', RATE_LIMITS: 'false' },
  });
  try {
    const origin = new URL(stack.baseUrl).origin;
    const api = apiClient(stack.baseUrl);
    const account = await api.newAccount();
    const device = api.device(account.device_id);
    await device.post('/account/plan', { plan: 'unlimited' });
    const set = await api.call('PATCH', `/agents/${account.agent_id}`, {
      body: { backchannel_client_notification_endpoint: `${pinger.origin}/ping` },
      headers: { 'x-device-id': account.device_id },
    });
    if (set.status !== 200) throw new Error(`ping endpoint refused: ${set.status} ${JSON.stringify(set.body)}`);
    const basic = `Basic ${Buffer.from(`${account.agent_id}:${account.api_key}`).toString('base64')}`;
    const details = (title: string) => JSON.stringify([{ type: 'agent_action', action_type: 'communication', title }]);

    /** One request: its approve → ping → token time in ms, or undefined when a step failed. */
    const once = async (n: number): Promise<number | undefined> => {
      const started = await form(
        `${origin}/oauth/bc-authorize`,
        { scope: 'openid', client_notification_token: `tok${n}`, authorization_details: details(`Bench ${n}`) },
        basic,
      );
      if (started.status !== 200) return undefined;
      const authReqId = started.body.auth_req_id as string;
      const pending = (await device.get('/pending')).body.requests as Array<{ id: string; title: string }>;
      const action = pending.find((r) => r.title === `Bench ${n}`);
      if (!action) return undefined;
      const pinged = new Promise<void>((resolve) => waiters.set(authReqId, resolve));
      const t0 = performance.now();
      await device.post(`/actions/${action.id}/approve`, {});
      await pinged;
      waiters.delete(authReqId);
      const tokens = await form(`${origin}/oauth/token`, { grant_type: GRANT, auth_req_id: authReqId }, basic);
      return tokens.status === 200 ? performance.now() - t0 : undefined;
    };

    const rows: Row[] = [];
    for (const concurrency of CONCURRENCY) {
      const times: number[] = [];
      let failed = 0;
      let next = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < REQUESTS) {
            const took = await once(next++);
            if (took === undefined) failed += 1;
            else times.push(took);
          }
        }),
      );
      times.sort((a, b) => a - b);
      rows.push({
        name: `${mode}, ${concurrency} at a time`,
        p50: percentile(times, 50),
        p99: percentile(times, 99),
        max: times.at(-1) ?? 0,
        failed,
      });
    }
    return rows;
  } finally {
    await stack.stop();
    await pinger.close();
  }
}

export const cibaBench: BenchCase = {
  name: 'ciba',
  description: "OpenID CIBA in ping mode: from the holder's approve to the client's token (approve → ping → token)",
  async run(infra) {
    out(`${REQUESTS} requests at each of ${CONCURRENCY.join(' and ')} at a time; the token is asked for on the ping`);
    const modes: StackMode[] = ['all-in-one'];
    if (infra.natsUrl) modes.push('processes');
    else out('processes skipped: no NATS server reachable');
    const rows: Row[] = [];
    for (const mode of modes) rows.push(...(await withDatabase(infra, (url) => onStack(infra, mode, url))));
    out(
      `${'case'.padEnd(32)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'max ms'.padStart(8)} ${'failed'.padStart(7)}`,
    );
    for (const r of rows)
      out(
        `${r.name.padEnd(32)} ${r.p50.toFixed(1).padStart(8)} ${r.p99.toFixed(1).padStart(8)} ${r.max.toFixed(1).padStart(8)} ${String(r.failed).padStart(7)}`,
      );
    for (const r of rows)
      out(
        `p99 approve → ping → token, ${r.name}: ${r.p99.toFixed(1)} ms (goal < ${P99_GOAL_MS} ms) ${r.p99 < P99_GOAL_MS ? 'ok' : 'over'}`,
      );
  },
};
