import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessBus } from '@agent-auth/bus';
import { loadConfig } from '@agent-auth/config';
import { createGateway } from '../index.js';

describe('GET /openapi.json', () => {
  let app: Awaited<ReturnType<typeof createGateway>>;
  let doc: any;

  beforeAll(async () => {
    const bus = createInProcessBus({ prefix: 'openapi', timeoutMs: 100 });
    app = await createGateway({ bus, config: { ...loadConfig({}), RATE_LIMITS: false }, log: pino({ level: 'silent' }) });
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });
  afterAll(async () => app?.close());

  it('describes every API route the gateway serves, with its security scheme', () => {
    const expected: Array<[string, string, string | null]> = [
      ['post', '/actions', 'apiKey'], ['get', '/actions/{request_id}', 'apiKey'], ['get', '/pending', 'deviceId'],
      ['post', '/actions/{request_id}/approve', 'deviceId'], ['post', '/rules', 'deviceId'], ['delete', '/spending-limits/{limit_id}', 'deviceId'],
      ['post', '/vault/execute/{request_id}', 'apiKey'], ['post', '/accounts', null], ['get', '/agent/spending-summary', 'apiKey'],
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

    const approve = doc.paths['/actions/{request_id}/approve'].post;
    expect(approve.parameters).toEqual([expect.objectContaining({ name: 'request_id', in: 'path', required: true })]);
    expect(approve.requestBody.required).toBe(false); // every field of an approval is optional
    const list = doc.paths['/actions'].get;
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['limit', 'status', 'action_type']));
  });
});
