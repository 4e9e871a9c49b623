// Bench case: what authentication and the shared rate limit cost per request. POST /actions through the gateway with
// the rate limit on (one Postgres function call per request) vs off, and with the auth cache off (argon2id on every
// request), spreading the load over many agents so that no key reaches its limit.
import autocannon from 'autocannon';
import { apiClient } from '../harness/http.js';
import { startStack, type StackMode } from '../harness/stack.js';
import { out, settings, withDatabase, type BenchCase } from './load.js';

export interface AdmissionFigures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  mean: number;
  non2xx: number;
}

const AGENTS = 64;

/** Loads POST /actions with keys taken in turn from `keys`, after a 2 s warm-up. */
async function load(
  name: string,
  baseUrl: string,
  keys: string[],
  connections: number,
  seconds: number,
): Promise<AdmissionFigures> {
  let next = 0;
  const body = JSON.stringify({
    action_type: 'purchase',
    title: 'Bench purchase',
    amount: 9.99,
    metadata: { order: 'bench' },
  });
  const run = (duration: number) =>
    autocannon({
      url: baseUrl,
      connections,
      duration,
      requests: [
        {
          method: 'POST',
          path: '/api/v1/actions',
          body,
          setupRequest: (req) => ({
            ...req,
            headers: { ...req.headers, 'content-type': 'application/json', 'x-api-key': keys[next++ % keys.length]! },
          }),
        },
      ],
    });
  await run(2);
  const r = await run(seconds);
  return {
    name,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    mean: r.latency.average,
    non2xx: r.non2xx + r.errors,
  };
}

/**
 * One stack, `AGENTS` agents on one unlimited account; the load runs with the given settings. The window is 1 s with
 * the default 120 per key, so each key's log holds at most 120 entries, as at the default 120 a minute.
 */
export async function admissionCase(input: {
  mode: StackMode;
  databaseUrl: string;
  natsUrl: string | null;
  name: string;
  env: Record<string, string>;
  connections: number;
  seconds: number;
}): Promise<AdmissionFigures> {
  const stack = await startStack({
    mode: input.mode,
    databaseUrl: input.databaseUrl,
    natsUrl: input.natsUrl,
    name: 'bench-admission',
    env: {
      LOG_REQUESTS: 'false',
      DB_POOL_SIZE: '10',
      RATE_LIMIT_WINDOW_SECONDS: '1',
      RATE_LIMIT_AGENT: '120',
      ...input.env,
    },
  });
  try {
    const api = apiClient(stack.baseUrl);
    const account = await api.newAccount();
    const device = api.device(account.device_id);
    await device.post('/account/plan', { plan: 'unlimited' });
    const keys = [account.api_key];
    while (keys.length < AGENTS) {
      const agent = await device.post('/agents', { name: `bench-${keys.length}` });
      keys.push(agent.body.api_key as string);
    }
    return await load(input.name, stack.baseUrl.replace(/\/api\/v1$/, ''), keys, input.connections, input.seconds);
  } finally {
    await stack.stop();
  }
}

export interface CallFigures {
  name: string;
  calls: number;
  meanUs: number;
  p50Us: number;
  p99Us: number;
}

function summarize(name: string, samplesNs: bigint[]): CallFigures {
  const us = samplesNs.map((n) => Number(n) / 1000).sort((a, b) => a - b);
  const at = (q: number) => us[Math.min(us.length - 1, Math.floor(q * us.length))]!;
  return { name, calls: us.length, meanUs: us.reduce((a, b) => a + b, 0) / us.length, p50Us: at(0.5), p99Us: at(0.99) };
}

/**
 * The rate-limit check alone, as the gateway makes it: one `gateway.rate_limit_hit` call per request, one at a time,
 * on logs already holding 120 entries (a key at the default limit), next to a bare `select 1` round trip.
 */
export async function rateLimitCallCost(databaseUrl: string, calls: number): Promise<CallFigures[]> {
  const { connectDatabase, migrate } = await import('@agent-auth/db');
  const { createRateLimitStore } = await import('../../services/gateway/store/rate-limits.js');
  const sql = connectDatabase(databaseUrl, { max: 1 });
  try {
    await migrate(sql, {
      schema: 'gateway',
      dir: new URL('../../services/gateway/store/migrations', import.meta.url).pathname,
    });
    const store = createRateLimitStore(sql);
    const keys = Array.from({ length: 16 }, (_, i) => `bench:${i}`);
    for (const key of keys) for (let i = 0; i < 120; i++) await store.hit(key, 10_000, 60_000);
    const time = async (fn: (i: number) => Promise<unknown>) => {
      const samples: bigint[] = [];
      for (let i = 0; i < calls; i++) {
        const t = process.hrtime.bigint();
        await fn(i);
        samples.push(process.hrtime.bigint() - t);
      }
      return samples;
    };
    const bare = await time(() => sql`select 1`);
    const hits = await time((i) => store.hit(keys[i % keys.length]!, 10_000, 60_000));
    return [summarize('select 1 (one round trip)', bare), summarize('rate_limit_hit (120-entry log)', hits)];
  } finally {
    await sql.end();
  }
}

/** Calls per second that `concurrency` callers sustain for `seconds`, for a bare round trip and the rate-limit check. */
export async function rateLimitThroughput(
  databaseUrl: string,
  concurrency: number,
  seconds: number,
): Promise<{ bare: number; hit: number }> {
  const { connectDatabase, migrate } = await import('@agent-auth/db');
  const { createRateLimitStore } = await import('../../services/gateway/store/rate-limits.js');
  const sql = connectDatabase(databaseUrl, { max: 10 });
  try {
    await migrate(sql, {
      schema: 'gateway',
      dir: new URL('../../services/gateway/store/migrations', import.meta.url).pathname,
    });
    const store = createRateLimitStore(sql);
    const rate = async (fn: (i: number) => Promise<unknown>) => {
      let next = 0;
      const end = Date.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (Date.now() < end) await fn(next++);
        }),
      );
      return next / seconds;
    };
    // 64 identities, a 1 s window of 120: each log holds about as many entries as a busy key at the default limit.
    return { bare: await rate(() => sql`select 1`), hit: await rate((i) => store.hit(`bench:${i % 64}`, 120, 1000)) };
  } finally {
    await sql.end();
  }
}

/** The admission case of `npm run bench`: POST /actions with the shared limit on vs off, uncached auth, and the check alone. */
export const admissionBench: BenchCase = {
  name: 'admission',
  description: 'what authentication and the shared rate limit cost per request',
  async run(infra) {
    const mode: StackMode = infra.natsUrl ? 'processes' : 'all-in-one';
    const { connections, seconds } = settings;
    out(`POST /actions (${mode}), ${connections} connections, ${AGENTS} agents, 1 s window of 120 per key`);
    const variants: Array<[string, Record<string, string>]> = [
      ['(c) rate limit on, auth cached', {}],
      ['(d) rate limit off, auth cached', { RATE_LIMITS: 'false' }],
      ['(e) rate limit on, auth uncached (argon2id)', { AUTH_CACHE_TTL_MS: '0' }],
    ];
    const rows: AdmissionFigures[] = [];
    for (const [name, env] of variants) {
      rows.push(
        await withDatabase(infra, (databaseUrl) =>
          admissionCase({ mode, databaseUrl, natsUrl: infra.natsUrl, name, env, connections, seconds }),
        ),
      );
    }
    out(
      `${'case'.padEnd(52)} ${'req/s'.padStart(9)} ${'mean ms'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'non-2xx'.padStart(8)}`,
    );
    for (const r of rows) {
      out(
        `${r.name.padEnd(52)} ${r.rps.toFixed(0).padStart(9)} ${r.mean.toFixed(2).padStart(8)} ${r.p50.toFixed(1).padStart(8)} ${r.p99.toFixed(1).padStart(8)} ${String(r.non2xx).padStart(8)}`,
      );
    }
    const [on, off, uncached] = rows as [AdmissionFigures, AdmissionFigures, AdmissionFigures];
    out(
      `ratio (c)/(d): throughput ${(on.rps / off.rps).toFixed(2)}, mean latency ${(on.mean / off.mean).toFixed(2)} (${(on.mean - off.mean).toFixed(2)} ms per request with the limit on)`,
    );
    out(
      `ratio (e)/(c): throughput ${(uncached.rps / on.rps).toFixed(3)}, mean latency ${(uncached.mean / on.mean).toFixed(1)} (${(uncached.mean - on.mean).toFixed(1)} ms per request without the auth cache)`,
    );

    const calls = await withDatabase(infra, (databaseUrl) => rateLimitCallCost(databaseUrl, 3000));
    out('The rate-limit check alone, one call at a time on keys holding 120 requests in their window:');
    out(
      `${'call'.padEnd(52)} ${'calls'.padStart(9)} ${'mean µs'.padStart(8)} ${'p50 µs'.padStart(8)} ${'p99 µs'.padStart(8)}`,
    );
    for (const c of calls)
      out(
        `${c.name.padEnd(52)} ${String(c.calls).padStart(9)} ${c.meanUs.toFixed(0).padStart(8)} ${c.p50Us.toFixed(0).padStart(8)} ${c.p99Us.toFixed(0).padStart(8)}`,
      );
    const [bare, hit] = calls as [CallFigures, CallFigures];
    out(
      `ratio rate_limit_hit / select 1: p50 ${(hit.p50Us / bare.p50Us).toFixed(2)}, mean ${(hit.meanUs / bare.meanUs).toFixed(2)} (one round trip plus about ${(hit.p50Us - bare.p50Us).toFixed(0)} µs at p50)`,
    );
    const throughput = await withDatabase(infra, (databaseUrl) => rateLimitThroughput(databaseUrl, connections, 3));
    out(
      `At ${connections} callers on a pool of 10: ${throughput.hit.toFixed(0)} checks/s against ${throughput.bare.toFixed(0)} bare round trips/s (ratio ${(throughput.hit / throughput.bare).toFixed(2)}): the headroom of one Postgres for every gateway replica together.`,
    );
  },
};
