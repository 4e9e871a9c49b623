import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errors } from '@agent-auth/errors';
import { installErrorHandling } from './http-errors.js';
import { createInProcessRoutes, type InProcessCall } from './in-process-routes.js';
import type { InProcessAnswered } from './observability.js';
import { addRoute, NO_CONTENT } from './route.js';

const agent = { account_id: 'acc_1', agent_id: 'agt_1' };
const answered: InProcessAnswered[] = [];

// The same routes, called over fastify (inject) and in process: the answers must agree, errors included.
async function buildApp() {
  const app = Fastify();
  installErrorHandling(app, 1024);
  const routes = createInProcessRoutes(app, { bodyLimit: 1024, log: app.log, observe: (a) => answered.push(a) });
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request) => {
    if (request.headers['x-api-key'] === 'key') request.principal = agent;
  });
  await app.register(
    async (api) => {
      addRoute(api, {
        method: 'GET',
        url: '/things/:thing_id',
        auth: 'agent',
        params: z.object({ thing_id: z.string().max(10) }),
        query: z.object({ n: z.coerce.number().int().optional() }),
        response: z.object({ id: z.string(), n: z.number().optional(), by: z.string() }),
        summary: 'a thing',
        description: 'a thing',
        tag: 'Actions',
        handler: async ({ params, query, principal }) => ({ id: params.thing_id, n: query.n, by: principal.agent_id }),
      });
      addRoute(api, {
        method: 'GET',
        url: '/things/special',
        auth: 'agent',
        summary: 'the literal route',
        description: 'the literal route',
        tag: 'Actions',
        handler: async () => ({ special: true }),
      });
      addRoute(api, {
        method: 'POST',
        url: '/things',
        auth: 'agent',
        body: z.object({ name: z.string() }).strict(),
        summary: 'make a thing',
        description: 'make a thing',
        tag: 'Actions',
        handler: async ({ body, setHeader }) => {
          setHeader('idempotent-replayed', 'true');
          if (body.name === 'none') return NO_CONTENT;
          if (body.name === 'gone') throw errors.serviceUnavailable('things');
          return { made: body.name };
        },
      });
      addRoute(api, {
        method: 'GET',
        url: '/slow',
        auth: 'agent',
        summary: 'a held read',
        description: 'a held read',
        tag: 'Actions',
        handler: ({ onClientGone }) => new Promise((resolve) => onClientGone(() => resolve({ gone: true }))),
      });
      addRoute(api, {
        method: 'GET',
        url: '/devices-only',
        auth: 'device',
        summary: 'not for agents',
        description: 'not for agents',
        tag: 'Actions',
        handler: async () => ({}),
      });
    },
    { prefix: '/api/v1' },
  );
  return { app, routes };
}

let built: Awaited<ReturnType<typeof buildApp>>;
beforeAll(async () => {
  built = await buildApp();
});
afterAll(() => built.app.close());

const call = (over: Partial<InProcessCall> & Pick<InProcessCall, 'path'>): InProcessCall => ({
  method: 'GET',
  query: new URLSearchParams(),
  body: undefined,
  headers: {},
  agent,
  requestId: 'req-1',
  ...over,
});

/** The same request over fastify, as status and body. */
async function overHttp(method: 'GET' | 'POST', url: string, payload?: string) {
  const res = await built.app.inject({
    method,
    url,
    headers: { 'x-api-key': 'key', ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(payload === undefined ? {} : { payload }),
  });
  return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null };
}

async function inProcess(c: InProcessCall) {
  const res = await built.routes.serve(c);
  if (!res) return undefined;
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

describe('agent routes called in process', () => {
  it('answer as the same route over HTTP: parameters decoded, query parsed, reply shaped', async () => {
    const got = await inProcess(call({ path: '/api/v1/things/a%20b', query: new URLSearchParams('n=3') }));
    expect(got?.body).toEqual({ id: 'a b', n: 3, by: 'agt_1' });
    expect(got?.body).toEqual((await overHttp('GET', '/api/v1/things/a%20b?n=3')).body);
  });

  it('prefer a literal segment to a parameter, as the router does', async () => {
    expect((await inProcess(call({ path: '/api/v1/things/special' })))?.body).toEqual({ special: true });
  });

  it('refuse bad input with the API error the HTTP route gives', async () => {
    const cases: Array<[InProcessCall, 'GET' | 'POST', string, string | undefined]> = [
      [call({ path: '/api/v1/things/far-too-long-id' }), 'GET', '/api/v1/things/far-too-long-id', undefined],
      [call({ path: '/api/v1/things/x', query: new URLSearchParams('n=x') }), 'GET', '/api/v1/things/x?n=x', undefined],
      [call({ method: 'POST', path: '/api/v1/things', body: '{"name":' }), 'POST', '/api/v1/things', '{"name":'],
      [call({ method: 'POST', path: '/api/v1/things', body: '{"nom":"x"}' }), 'POST', '/api/v1/things', '{"nom":"x"}'],
      [
        call({ method: 'POST', path: '/api/v1/things', body: JSON.stringify({ name: 'x'.repeat(2000) }) }),
        'POST',
        '/api/v1/things',
        JSON.stringify({ name: 'x'.repeat(2000) }),
      ],
      [
        call({ method: 'POST', path: '/api/v1/things', body: '{"name":"gone"}' }),
        'POST',
        '/api/v1/things',
        '{"name":"gone"}',
      ],
    ];
    for (const [direct, method, url, payload] of cases) {
      const got = await inProcess(direct);
      const want = await overHttp(method, url, payload);
      expect(got?.status, url).toBe(want.status);
      expect(got?.body.code, url).toBe(want.body.code);
      expect(got?.status).toBeGreaterThanOrEqual(400);
    }
    const gone = await inProcess(call({ method: 'POST', path: '/api/v1/things', body: '{"name":"gone"}' }));
    expect(gone?.headers.get('retry-after')).toBe('1');
  });

  it('carry the headers a handler sets, and 204 without a body', async () => {
    const made = await inProcess(call({ method: 'POST', path: '/api/v1/things', body: '{"name":"a"}' }));
    expect(made?.body).toEqual({ made: 'a' });
    expect(made?.headers.get('idempotent-replayed')).toBe('true');
    const none = await built.routes.serve(call({ method: 'POST', path: '/api/v1/things', body: '{"name":"none"}' }));
    expect(none?.status).toBe(204);
    expect(await none?.text()).toBe('');
  });

  it('leave anything but an agent route to the app (undefined)', async () => {
    expect(await built.routes.serve(call({ path: '/api/v1/devices-only' }))).toBeUndefined();
    expect(await built.routes.serve(call({ path: '/api/v1/nowhere' }))).toBeUndefined();
    expect(await built.routes.serve(call({ method: 'DELETE', path: '/api/v1/things/x' }))).toBeUndefined();
  });

  it('end a held call when its caller aborts, rejecting as fetch does, and write its access line', async () => {
    const controller = new AbortController();
    const pending = built.routes.serve(
      call({ path: '/api/v1/slow', requestId: 'req-slow', signal: controller.signal }),
    );
    setTimeout(() => controller.abort(new Error('cancelled by the client')), 20);
    await expect(pending).rejects.toThrow('cancelled by the client');
    const line = answered.find((a) => a.reqId === 'req-slow');
    expect(line).toMatchObject({ method: 'GET', url: '/api/v1/slow', route: '/api/v1/slow', status: 499 });
  });
});
