import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';
import { parseExposition, sampleValue, type Exposition } from '../harness/prometheus-text.js';
import { duplicateKeys, linesOf } from '../harness/log-lines.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', skip: false },
];
// Small enough that a few unauthenticated requests pass it, so the probes, /metrics and the docs are seen to be
// outside the per-IP budget, and a refusal is counted.
const IP_LIMIT = 3;

/** Scrapes a /metrics URL over HTTP and parses it strictly (throws on anything Prometheus would refuse). */
async function scrape(url: string): Promise<Exposition> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await res.text());
}

/** The port a service process printed in its 'metrics listening' log line. */
function metricsPortOf(output: string): number {
  for (const line of linesOf(output)) {
    const parsed = JSON.parse(line) as { msg?: string; metrics_port?: number };
    if (parsed.msg === 'metrics listening' && parsed.metrics_port) return parsed.metrics_port;
  }
  throw new Error(`no 'metrics listening' line in:\n${output}`);
}

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`metrics and logs (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let origin: string;

    beforeAll(async () => {
      db = await createTestDatabase();
      stack = await startStack({
        mode,
        databaseUrl: db.url,
        natsUrl,
        name: 'metrics',
        env: { RATE_LIMIT_IP: String(IP_LIMIT), WEBHOOK_RETRY_SCHEDULE: '0.3,0.3' },
      });
      api = apiClient(stack.baseUrl);
      origin = new URL(stack.baseUrl).origin;
    });
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    it('GET /metrics is valid exposition text with the service metrics and the Node.js defaults; counters move', async () => {
      const account = await api.newAccount(); // 1 of the IP's budget
      const before = await scrape(`${origin}/metrics`);
      for (const name of [
        'agent_auth_http_request_duration_seconds',
        'agent_auth_bus_request_duration_seconds',
        'agent_auth_decisions_total',
        'agent_auth_rate_limit_refusals_total',
        'agent_auth_outbox_lag_seconds',
        'process_cpu_user_seconds_total',
        'nodejs_eventloop_lag_seconds',
        'nodejs_heap_size_used_bytes',
      ]) {
        expect(before.types.has(name), name).toBe(true);
      }
      if (mode === 'all-in-one') {
        // One registry for the process: the services' own metrics are on the gateway's page too.
        for (const name of [
          'agent_auth_webhook_attempts_total',
          'agent_auth_outbox_oldest_unpublished_seconds',
          'agent_auth_bus_handled_duration_seconds',
        ]) {
          expect(before.types.has(name), name).toBe(true);
        }
      }

      const created = await api
        .agent(account.api_key)
        .post('/actions', { action_type: 'purchase', title: 'A book', amount: 12.5 });
      expect(created.status).toBe(200);
      const denied = await api.device(account.device_id).post(`/actions/${created.body.id}/deny`, {});
      expect(denied.status).toBe(200);
      const after = await scrape(`${origin}/metrics`);

      const route = { method: 'POST', route: '/api/v1/actions', status_code: '200' };
      expect(sampleValue(after, 'agent_auth_http_request_duration_seconds_count', route)).toBe(
        sampleValue(before, 'agent_auth_http_request_duration_seconds_count', route) + 1,
      );
      // Labelled by the route pattern, never the raw URL with the request id in it.
      expect(
        sampleValue(after, 'agent_auth_http_request_duration_seconds_count', {
          route: '/api/v1/actions/:request_id/deny',
        }),
      ).toBe(1);
      expect(after.samples.some((s) => s.labels.route?.includes(created.body.id))).toBe(false);
      expect(
        sampleValue(after, 'agent_auth_bus_request_duration_seconds_count', {
          subject: 'actions.create',
          outcome: 'ok',
        }),
      ).toBeGreaterThanOrEqual(1);
      if (mode === 'all-in-one') {
        expect(sampleValue(after, 'agent_auth_decisions_total', { outcome: 'pending', by: 'policy' })).toBe(
          sampleValue(before, 'agent_auth_decisions_total', { outcome: 'pending', by: 'policy' }) + 1,
        );
        expect(sampleValue(after, 'agent_auth_decisions_total', { outcome: 'denied', by: 'device' })).toBe(1);
      }
      expect(sampleValue(after, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    });

    // All-in-one serves every service's metrics from the gateway; separate processes each have their own port.
    if (mode === 'processes') {
      it('every other service serves its own metrics on METRICS_PORT', async () => {
        const account = await api.newAccount();
        const created = await api
          .agent(account.api_key)
          .post('/actions', { action_type: 'purchase', title: 'Metrics', amount: 1 });
        expect(created.status).toBe(200);
        const [actions] = stack.processes('actions');
        const page = await scrape(`http://127.0.0.1:${metricsPortOf(stack.outputOf(actions!))}/metrics`);
        expect(
          sampleValue(page, 'agent_auth_bus_handled_duration_seconds_count', {
            subject: 'actions.create',
            outcome: 'ok',
          }),
        ).toBeGreaterThanOrEqual(1);
        expect(
          sampleValue(page, 'agent_auth_decisions_total', { outcome: 'pending', by: 'policy' }),
        ).toBeGreaterThanOrEqual(1);
        expect(page.types.has('agent_auth_outbox_oldest_unpublished_seconds')).toBe(true);
        // The actions service asks the policy service for the decision: its bus requests are timed by subject.
        expect(
          sampleValue(page, 'agent_auth_bus_request_duration_seconds_count', { subject: 'policy.decide' }),
        ).toBeGreaterThanOrEqual(1);

        const [policy] = stack.processes('policy');
        const policyPage = await scrape(`http://127.0.0.1:${metricsPortOf(stack.outputOf(policy!))}/metrics`);
        expect(
          sampleValue(policyPage, 'agent_auth_bus_handled_duration_seconds_count', {
            subject: 'policy.decide',
            outcome: 'ok',
          }),
        ).toBeGreaterThanOrEqual(1);
        for (const service of ['notifier', 'vault-executor']) {
          const [child] = stack.processes(service);
          const servicePage = await scrape(`http://127.0.0.1:${metricsPortOf(stack.outputOf(child!))}/metrics`);
          expect(servicePage.types.has('nodejs_eventloop_lag_seconds'), service).toBe(true);
          if (service === 'notifier') expect(servicePage.types.has('agent_auth_webhook_attempts_total')).toBe(true);
        }
        // Kubernetes' probes (deploy/kubernetes): every one of them serving is ready.
        for (const service of ['actions', 'policy', 'notifier', 'vault-executor']) {
          const [child] = stack.processes(service);
          const port = metricsPortOf(stack.outputOf(child!));
          expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status, service).toBe(200);
          expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status, service).toBe(200);
        }
      });
    }

    it('webhook attempts are counted by result and the outbox lag is observed (plain http receiver on loopback)', async () => {
      let status = 500; // the first attempt fails, the retry is delivered
      const hits: string[] = [];
      const receiver = createServer((req, res) => {
        hits.push(req.url ?? '');
        res.writeHead(status).end();
        status = 200;
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
      try {
        const page = () => {
          if (mode === 'all-in-one') return scrape(`${origin}/metrics`);
          const [notifier] = stack.processes('notifier');
          return scrape(`http://127.0.0.1:${metricsPortOf(stack.outputOf(notifier!))}/metrics`);
        };
        const account = await api.newAccount();
        const callback = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
        const created = await api
          .agent(account.api_key)
          .post('/actions', { action_type: 'purchase', title: 'Hook', amount: 2, callback_url: callback });
        expect(created.status).toBe(200);
        expect((await api.device(account.device_id).post(`/actions/${created.body.id}/deny`, {})).status).toBe(200);
        let after = await page();
        for (
          let i = 0;
          i < 100 && sampleValue(after, 'agent_auth_webhook_attempts_total', { result: 'delivered' }) < 1;
          i++
        ) {
          await new Promise((r) => setTimeout(r, 200));
          after = await page();
        }
        expect(sampleValue(after, 'agent_auth_webhook_attempts_total', { result: 'retrying' })).toBe(1);
        expect(sampleValue(after, 'agent_auth_webhook_attempts_total', { result: 'delivered' })).toBe(1);
        expect(hits).toHaveLength(2);
        if (mode === 'all-in-one')
          expect(sampleValue(after, 'agent_auth_outbox_lag_seconds_count')).toBeGreaterThanOrEqual(2);
      } finally {
        receiver.close();
      }
    }, 40_000);

    it('probes, /metrics, /docs and the OpenAPI document are outside the per-IP budget; refusals are counted', async () => {
      for (let i = 0; i < IP_LIMIT + 2; i++) {
        for (const path of ['/healthz', '/metrics', '/docs', '/api/v1/openapi.json', '/openapi.json']) {
          const res = await fetch(origin + path);
          expect(res.status, `${path} #${i + 1}`).toBe(200);
          await res.arrayBuffer();
        }
      }
      const before = sampleValue(await scrape(`${origin}/metrics`), 'agent_auth_rate_limit_refusals_total', {
        identity: 'ip',
      });
      let refused = 0;
      for (let i = 0; i < IP_LIMIT + 1; i++)
        if ((await api.call('POST', '/accounts', { body: {} })).status === 429) refused++;
      expect(refused).toBeGreaterThan(0);
      const after = sampleValue(await scrape(`${origin}/metrics`), 'agent_auth_rate_limit_refusals_total', {
        identity: 'ip',
      });
      expect(after - before).toBe(refused);
    });

    it('every process writes JSON lines without a repeated key, and one access line per request', async () => {
      const requestId = `access-line-${mode}`;
      const res = await fetch(`${stack.baseUrl}/actions`, {
        headers: { 'x-request-id': requestId, 'x-api-key': 'aa_wrong' },
      });
      expect([401, 429]).toContain(res.status);
      await new Promise((r) => setTimeout(r, 300)); // let the line reach the log file
      const lines = linesOf(stack.logs());
      expect(lines.length).toBeGreaterThan(5);
      for (const line of lines) {
        expect(() => JSON.parse(line), line).not.toThrow();
        expect(duplicateKeys(line), line).toEqual([]);
      }
      const mine = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.reqId === requestId);
      const access = mine.filter((l) => l.msg === 'request');
      expect(access).toHaveLength(1);
      expect(access[0]).toMatchObject({ method: 'GET', route: '/api/v1/actions', status: res.status });
      expect(typeof access[0]!.detail).toBe('string'); // why it was refused, on the same line
      expect(mine.filter((l) => l.msg === 'incoming request' || l.msg === 'request completed')).toEqual([]);
      expect(stack.logs()).not.toContain('aa_wrong');
    });
  });
}
