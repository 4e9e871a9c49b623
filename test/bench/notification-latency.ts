// Notification latency: from the approve call's response to the webhook's arrival at an HTTPS receiver on
// loopback, and from the create call's response to the device stream's `action.created` event, p50 and p99.
import { apiClient } from '../harness/http.js';
import { openEventStream } from '../harness/sse.js';
import { startStack, type StackMode } from '../harness/stack.js';
import { selfSignedCert, startUpstream, trustFile } from '../harness/upstream.js';
import { out, withDatabase, type BenchCase } from './load.js';

export interface NotificationFigures {
  name: string;
  count: number;
  p50: number;
  p99: number;
  max: number;
  /** How many notifications arrived before the HTTP response that caused them (counted as 0 ms). */
  early: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export function figures(name: string, samples: number[]): NotificationFigures {
  const sorted = samples.map((s) => Math.max(0, s)).sort((a, b) => a - b);
  return {
    name,
    count: samples.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1)!,
    early: samples.filter((s) => s < 0).length,
  };
}

/** Runs `task` for 0..count-1 with `concurrency` workers. */
export async function inParallel(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

/** One stack in one mode: N webhooks after approvals, N device stream events after creations. */
export async function notificationLatency(
  mode: StackMode,
  databaseUrl: string,
  natsUrl: string | null,
  label: string,
  count: number,
  concurrencies: number[],
): Promise<NotificationFigures[]> {
  const cert = selfSignedCert();
  const caFile = trustFile(cert);
  const arrivals = new Map<string, number>();
  const waiting = new Map<string, (at: number) => void>();
  const receiver = await startUpstream({
    tls: cert,
    handler: (req, res) => {
      const at = performance.now();
      const id = (JSON.parse(req.body) as { id: string }).id;
      arrivals.set(id, at);
      waiting.get(id)?.(at);
      res.writeHead(204).end();
    },
  });
  const arrival = (id: string) =>
    arrivals.has(id)
      ? Promise.resolve(arrivals.get(id)!)
      : Promise.race([
          new Promise<number>((resolve) => waiting.set(id, resolve)),
          new Promise<number>((_, reject) =>
            setTimeout(() => reject(new Error(`webhook of ${id} did not arrive in 30 s`)), 30_000).unref(),
          ),
        ]);
  const stack = await startStack({
    mode,
    databaseUrl,
    natsUrl,
    name: 'bench-notify',
    env: {
      NODE_EXTRA_CA_CERTS: caFile,
      LOG_REQUESTS: 'false',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
      DB_POOL_SIZE: '10',
    },
  });
  try {
    const api = apiClient(stack.baseUrl);
    const acct = await api.newAccount();
    const agent = api.agent(acct.api_key);
    const device = api.device(acct.device_id);

    const measure = async (concurrency: number): Promise<NotificationFigures[]> => {
      // Device stream: creation response → action.created on the stream.
      const stream = await openEventStream(`${stack.baseUrl}/device/events`, { 'x-device-id': acct.device_id });
      const created: string[] = [];
      const streamSamples: number[] = [];
      await inParallel(count, concurrency, async () => {
        const r = await agent.post('/actions', {
          action_type: 'purchase',
          title: 'Bench purchase',
          amount: 5,
          callback_url: `${receiver.origin}/hook`,
        });
        const answered = performance.now();
        if (r.status !== 200) throw new Error(`create failed: ${r.status} ${JSON.stringify(r.body)}`);
        created.push(r.body.id);
        const seen = await stream.next((e) => e.event === 'action.created' && e.data.action.id === r.body.id);
        streamSamples.push(seen.at - answered);
      });
      stream.close();

      // Webhooks: approve response → webhook arrival.
      const webhookSamples: number[] = [];
      await inParallel(created.length, concurrency, async (i) => {
        const id = created[i]!;
        const r = await device.post(`/actions/${id}/approve`);
        const answered = performance.now();
        if (r.status !== 200) throw new Error(`approve failed: ${r.status}`);
        webhookSamples.push((await arrival(id)) - answered);
      });
      return [
        figures(`${label}, ${concurrency} at a time: approve → webhook`, webhookSamples),
        figures(`${label}, ${concurrency} at a time: create → device stream`, streamSamples),
      ];
    };
    const rows: NotificationFigures[] = [];
    for (const concurrency of concurrencies) rows.push(...(await measure(concurrency)));
    return rows;
  } finally {
    await stack.stop();
    await receiver.close();
  }
}

/** Prints latency figures as a table. */
export function notificationTable(rows: NotificationFigures[], out: (line?: string) => void): void {
  out(
    `${'case'.padEnd(62)} ${'n'.padStart(6)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'max ms'.padStart(8)} ${'early'.padStart(6)}`,
  );
  for (const r of rows) {
    out(
      `${r.name.padEnd(62)} ${String(r.count).padStart(6)} ${r.p50.toFixed(1).padStart(8)} ${r.p99.toFixed(1).padStart(8)} ${r.max.toFixed(1).padStart(8)} ${String(r.early).padStart(6)}`,
    );
  }
}

/** Approve → webhook and create → device stream latency, over JetStream (processes) and in-process (all-in-one). */
export const notifyBench: BenchCase = {
  name: 'notify',
  description:
    'latency from the HTTP response to the webhook at an HTTPS receiver on loopback / to the device stream event',
  async run(infra) {
    const notifyCount = Number(process.env.BENCH_NOTIFY_REQUESTS ?? 1000);
    const notifyConcurrency = (process.env.BENCH_NOTIFY_CONCURRENCY ?? '1,8').split(',').map(Number);
    out(`${notifyCount} requests at each concurrency (${notifyConcurrency.join(', ')})`);
    const latency: NotificationFigures[] = [];
    if (infra.natsUrl)
      latency.push(
        ...(await withDatabase(infra, (url) =>
          notificationLatency(
            'processes',
            url,
            infra.natsUrl,
            '(b) processes, JetStream',
            notifyCount,
            notifyConcurrency,
          ),
        )),
      );
    latency.push(
      ...(await withDatabase(infra, (url) =>
        notificationLatency('all-in-one', url, null, '(a) all-in-one, in-process', notifyCount, notifyConcurrency),
      )),
    );
    notificationTable(latency, out);
  },
};
