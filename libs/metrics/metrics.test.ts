import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configureMetrics, metricsText, recordHttpRequest, registerOutboxBacklog, sealingLag } from './index.js';

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
    const dir = join(ROOT, 'deploy/kubernetes');
    const files = readdirSync(dir).filter((f) => /^20-.*\.yaml$/.test(f));
    expect(files.length).toBe(5);
    for (const file of files) {
      const text = readFileSync(join(dir, file), 'utf8');
      const port = file === '20-gateway.yaml' ? '8080' : '9464';
      expect(text, file).toContain('prometheus.io/scrape: "true"');
      expect(text, file).toContain(`prometheus.io/port: "${port}"`);
      expect(text, file).toContain('prometheus.io/path: /metrics');
      expect(text, file).toContain(`containerPort: ${port}`);
    }
    expect(readFileSync(join(dir, '10-configmap.yaml'), 'utf8')).toContain('METRICS_PORT: "9464"');
  });

  it('records nothing when switched off', async () => {
    configureMetrics({ enabled: false });
    recordHttpRequest('GET', '/switched-off', 200, 0.01);
    configureMetrics({ enabled: true });
    expect(await metricsText()).not.toContain('/switched-off');
  });
});
