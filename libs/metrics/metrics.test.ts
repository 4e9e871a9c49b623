import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import {
  configureMetrics,
  metricsText,
  recordHttpRequest,
  registerOutboxBacklog,
  sealingLag,
  startMetricsServer,
} from './index.js';

const ROOT = resolve(import.meta.dirname, '../..');

describe('the metrics the deploy files rely on', () => {
  it('every metric the Grafana dashboard queries is one this code exposes', async () => {
    configureMetrics({ enabled: true });
    sealingLag(); // registered by the process that seals the audit chain
    registerOutboxBacklog(async () => 0); // registered by the actions service's outbox relay
    const exposed = new Set(
      [...(await metricsText()).matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) =>
        type === 'histogram' ? [`${name}_bucket`, `${name}_count`, `${name}_sum`] : [name!],
      ),
    );
    const dashboard = readFileSync(join(ROOT, 'deploy/grafana/agent-auth-dashboard.json'), 'utf8');
    const queried = new Set([...dashboard.matchAll(/\b((?:agent_auth|nodejs|process)_[a-z0-9_]+)/g)].map((m) => m[1]!));
    expect(queried.size).toBeGreaterThan(10);
    for (const name of queried) expect(exposed.has(name), name).toBe(true);
  });

  it('every Deployment in deploy/kubernetes is annotated for scraping on the port its process serves /metrics on', () => {
    const dir = join(ROOT, 'deploy/kubernetes/base');
    const services = ['gateway', 'actions', 'policy', 'notifier', 'vault-executor'];
    const files = readdirSync(dir).filter((f) => services.includes(f.replace(/\.yaml$/, '')));
    expect(files.length).toBe(5);
    for (const file of files) {
      const text = readFileSync(join(dir, file), 'utf8');
      const port = file === 'gateway.yaml' ? '8080' : '9464';
      expect(text, file).toContain('prometheus.io/scrape: "true"');
      expect(text, file).toContain(`prometheus.io/port: "${port}"`);
      expect(text, file).toContain('prometheus.io/path: /metrics');
      expect(text, file).toContain(`containerPort: ${port}`);
    }
    expect(readFileSync(join(dir, 'configmap.yaml'), 'utf8')).toContain('METRICS_PORT: "9464"');
  });

  it('records nothing when switched off', async () => {
    configureMetrics({ enabled: false });
    recordHttpRequest('GET', '/switched-off', 200, 0.01);
    configureMetrics({ enabled: true });
    expect(await metricsText()).not.toContain('/switched-off');
  });

  it('serves the probes beside /metrics: /healthz always, /readyz only while the process says it is ready', async () => {
    let ready = false;
    const server = await startMetricsServer({
      config: { METRICS: true, METRICS_PORT: 0, HOST: '127.0.0.1' },
      log: pino({ level: 'silent' }),
      ready: async () => ready,
    });
    try {
      const get = (path: string) => fetch(`http://127.0.0.1:${server.port}${path}`);
      expect((await get('/healthz')).status).toBe(200);
      expect((await get('/readyz')).status).toBe(503);
      ready = true;
      expect((await get('/readyz')).status).toBe(200);
      expect((await get('/metrics')).status).toBe(200);
      expect((await get('/other')).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});
