import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { duplicateKeys } from './log-lines.js';
import { parseExposition, sampleValue } from './prometheus-text.js';
import { SERVICE_NODE_FLAGS } from './stack.js';

describe('the exposition format reader the metrics tests rely on', () => {
  it('reads what prom-client writes', async () => {
    const registry = new Registry();
    const c = new Counter({ name: 'x_total', help: 'x', labelNames: ['kind'], registers: [registry] });
    const h = new Histogram({
      name: 'lat_seconds',
      help: 'h "quoted"',
      labelNames: ['route'],
      buckets: [0.1, 1],
      registers: [registry],
    });
    c.inc({ kind: 'a "b"\\c' }, 2);
    h.observe({ route: '/x' }, 0.5);
    h.observe({ route: '/x' }, 5);
    const parsed = parseExposition(await registry.metrics());
    expect(parsed.types.get('lat_seconds')).toBe('histogram');
    expect(sampleValue(parsed, 'x_total', { kind: 'a "b"\\c' })).toBe(2);
    expect(sampleValue(parsed, 'lat_seconds_count', { route: '/x' })).toBe(2);
    expect(sampleValue(parsed, 'lat_seconds_bucket', { route: '/x', le: '1' })).toBe(1);
  });

  it('refuses what Prometheus would refuse', () => {
    const bad = [
      'metric 1', // no newline at the end
      'bad-name 1\n',
      'm{a="1" 1\n',
      'm{a=1} 1\n',
      'm one\n',
      '# TYPE m counter\n# TYPE m gauge\n',
      '# TYPE m histogram\nm_bucket{le="1"} 2\nm_bucket{le="+Inf"} 1\nm_count 1\nm_sum 1\n',
      '# TYPE m histogram\nm_bucket{le="1"} 1\nm_bucket{le="+Inf"} 2\nm_count 3\nm_sum 1\n',
      '# TYPE m counter\nm_bucket 1\n',
    ];
    for (const text of bad) expect(() => parseExposition(text), JSON.stringify(text)).toThrow();
  });
});

describe('duplicateKeys', () => {
  it('finds a key written twice in one object, at any depth, and nothing else', () => {
    expect(duplicateKeys('{"service":"a","x":1,"service":"b"}')).toEqual(['service']);
    expect(duplicateKeys('{"a":{"k":1,"k":2},"k":3}')).toEqual(['k']);
    expect(duplicateKeys('{"a":[{"k":1},{"k":2}],"s":"\\"k\\",","b":{"k":1}}')).toEqual([]);
  });
});

describe('the Node.js flags the services run with', () => {
  it("are the same for `npm start`, each service's start script, the image's run-service and the processes tests start", () => {
    const dockerfile = readFileSync(resolve(import.meta.dirname, '../../Dockerfile'), 'utf8');
    const exec = /^exec node (.*) "\$main" "\$@"$/m.exec(dockerfile);
    expect(exec?.[1]?.split(/\s+/)).toEqual(SERVICE_NODE_FLAGS);
    expect(SERVICE_NODE_FLAGS).toContain('--initial-old-space-size=128');
    expect(SERVICE_NODE_FLAGS).toContain('--no-allocation-site-pretenuring');
    const services = resolve(import.meta.dirname, '../../services');
    for (const name of readdirSync(services)) {
      const pkg = JSON.parse(readFileSync(join(services, name, 'package.json'), 'utf8'));
      expect(pkg.scripts.start, name).toBe(`node ${SERVICE_NODE_FLAGS.join(' ')} dist/main.js`);
    }
  });
});
