import pino from 'pino';
import { readFileSync } from 'node:fs';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessBus } from '@agent-auth/bus';
import { loadConfig } from '@agent-auth/config';
import { createGateway } from '../index.js';
import { DOCS_CSP } from './api-reference.js';

describe('GET /openapi.json', () => {
  let app: Awaited<ReturnType<typeof createGateway>>;
  let doc: any;

  beforeAll(async () => {
    const bus = createInProcessBus({ prefix: 'openapi', timeoutMs: 100 });
    app = await createGateway({
      bus,
      config: { ...loadConfig({}), RATE_LIMITS: false },
      log: pino({ level: 'silent' }),
    });
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });
  afterAll(async () => app?.close());

  it('describes every API route the gateway serves, with its security scheme', () => {
    const expected: Array<[string, string, string | null]> = [
      ['post', '/actions', 'apiKey'],
      ['get', '/actions/{request_id}', 'apiKey'],
      ['get', '/pending', 'deviceId'],
      ['post', '/actions/{request_id}/approve', 'deviceId'],
      ['post', '/rules', 'deviceId'],
      ['delete', '/spending-limits/{limit_id}', 'deviceId'],
      ['post', '/vault/execute/{request_id}', 'apiKey'],
      ['post', '/accounts', null],
      ['get', '/agent/spending-summary', 'apiKey'],
    ];
    for (const [method, path, scheme] of expected) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op.security).toEqual(scheme ? [{ [scheme]: [] }] : []);
    }
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: '/api/v1' }]);
  });

  it('takes request, parameter and response schemas from the zod contracts the gateway validates with', () => {
    const create = doc.paths['/actions'].post;
    const body = create.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(expect.arrayContaining(['action_type', 'title']));
    expect(body.properties.risk_level.anyOf[0].enum).toEqual(['low', 'medium', 'high', 'critical']);
    expect(create.responses['200'].content['application/json'].schema.properties.status.enum).toContain('approved');
    expect(create.responses['400'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });

    const key = create.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key');
    expect(key).toMatchObject({ in: 'header', required: false, schema: { type: 'string' } });
    expect(key.schema.pattern).toBeDefined();
    expect(key.description).toMatch(/24 h/);
    expect(create.responses['200'].headers['Idempotent-Replayed']).toMatchObject({ schema: { const: 'true' } });

    const approve = doc.paths['/actions/{request_id}/approve'].post;
    expect(approve.parameters).toEqual([expect.objectContaining({ name: 'request_id', in: 'path', required: true })]);
    expect(approve.requestBody.required).toBe(false); // every field of an approval is optional
    const held = doc.paths['/actions/{request_id}'].get.parameters.find((p: { name: string }) => p.name === 'wait');
    expect(held).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 60 } });
    const list = doc.paths['/actions'].get;
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['limit', 'status', 'action_type']),
    );
  });

  it('passes the Redocly linter with its recommended rules without an error', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
    const shown = problems
      .filter((p) => p.severity === 'error')
      .map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(shown).toEqual([]);
  });

  it('gives every operation a summary, a description and one declared tag; the document is also under /api/v1', async () => {
    const tags = new Set((doc.tags as Array<{ name: string; description: string }>).map((t) => t.name));
    const operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
      Object.entries(ops).map(([m, op]) => [`${m} ${path}`, op] as const),
    );
    expect(operations.length).toBeGreaterThan(30);
    for (const [name, op] of operations) {
      expect(op.summary, name).toMatch(/\S/);
      expect(op.description?.length ?? 0, name).toBeGreaterThan(20);
      expect(op.tags, name).toHaveLength(1);
      expect(tags.has(op.tags[0]), name).toBe(true);
    }
    expect(doc.paths['/device/events'].get.responses['200'].content).toHaveProperty(['text/event-stream']);
    const v1 = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(v1.statusCode).toBe(200);
    expect(v1.json()).toEqual(doc);
  });

  it('serves the reference page at /docs under a strict CSP, every file it loads from the gateway itself', async () => {
    const page = await app.inject({ method: 'GET', url: '/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toBe(DOCS_CSP);
    expect(DOCS_CSP).toContain("script-src 'self'");
    expect(DOCS_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    expect(page.body).not.toMatch(/<script>|<script [^>]*>[^<\s]/); // no inline script
    const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(5);
    for (const asset of assets) {
      expect(asset, asset).toMatch(/^\/docs\//);
      const res = await app.inject({ method: 'GET', url: asset });
      expect(res.statusCode, asset).toBe(200);
    }
    // The page loads the document from the gateway, not from anywhere else.
    const init = await app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    expect(init.body).toContain("resolveUrl('./json')");
    const json = await app.inject({ method: 'GET', url: '/docs/json' });
    expect(json.json()).toEqual(doc);
  });

  it('every operation is in the API guide (docs/api-guide.md), so the prose reference stays complete', () => {
    const normalize = (text: string) => text.replace(/\{[a-z_]+\}/g, '{}');
    const guide = normalize(readFileSync(new URL('../../../docs/api-guide.md', import.meta.url), 'utf8'));
    const missing = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${normalize(path)}`))
      .filter((operation) => !new RegExp(`\`${operation.replace(/[{}?]/g, '\\$&')}[\`?]`).test(guide));
    expect(missing).toEqual([]);
  });
});
