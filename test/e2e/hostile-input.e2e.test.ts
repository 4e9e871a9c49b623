import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';

const { natsUrl } = inject('infra');
const modes: Array<{ mode: StackMode; skip: string | false }> = [
  { mode: 'processes', skip: natsUrl ? false : 'no NATS server reachable and no Docker' },
  { mode: 'all-in-one', skip: false },
];

/** Sends raw bytes over one connection and returns everything the server wrote before closing it. */
function rawHttp(baseUrl: string, request: string): Promise<string> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(url.port), url.hostname, () => socket.write(request));
    socket.on('data', (c) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
  });
}

/** A JSON value nested `levels` deep: {"a":{"a":…}}. */
function nested(levels: number): string {
  return `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
}

for (const { mode, skip } of modes) {
  describe.skipIf(skip)(`hostile input (${mode}${skip ? `; skipped: ${skip}` : ''})`, () => {
    let stack: Stack;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let api: ApiClient;
    let acct: Awaited<ReturnType<ApiClient['newAccount']>>;

    beforeAll(async () => {
      db = await createTestDatabase();
      // A short bus time-out: a reply lost on the bus would show as a 504 here, never as a slow 4xx.
      stack = await startStack({
        mode,
        databaseUrl: db.url,
        natsUrl,
        name: 'hostile',
        env: { BUS_TIMEOUT_MS: '3000' },
      });
      api = apiClient(stack.baseUrl);
      acct = await api.newAccount();
    });
    afterAll(async () => {
      await stack?.stop();
      await db?.drop();
    });

    it('answers an id with a line break in any path with a 404 carrying detail and code', async () => {
      const dev = { 'x-device-id': acct.device_id };
      const agent = { 'x-api-key': acct.api_key };
      for (const [method, path, headers] of [
        ['DELETE', '/rules/rul_a%0Ab', dev],
        ['DELETE', '/spending-limits/lim_%0D%0Ax', dev],
        ['DELETE', '/agents/agt_%0A', dev],
        ['DELETE', '/vault/credentials/cred_%0A', dev],
        ['GET', '/actions/act_a%0Ab', agent],
        ['POST', '/actions/act_%0A/approve', dev],
        ['POST', '/vault/execute/act_%0A', agent],
      ] as const) {
        const r = await api.call(method, path, { headers, ...(method === 'POST' ? { body: {} } : {}) });
        expect(r.status, `${method} ${path}`).toBe(404);
        expect(typeof r.body.detail).toBe('string');
        expect(r.body.code).toBe('id_not_found');
      }
    });

    it('escapes control characters a caller put into an error detail, and the reply still arrives', async () => {
      const r = await api.call('POST', '/actions/approve', {
        headers: { 'x-device-id': acct.device_id },
        body: { requests: [{ id: 'act_x\r\ny' }] },
      });
      expect(r.status).toBeLessThan(500);
      expect(JSON.stringify(r.body)).not.toMatch(/\\r\\n(?!y)/);
      const missing = await api.call('POST', '/rules', {
        headers: { 'x-device-id': acct.device_id },
        body: { action_type: 'purchase\nx', decision: 'auto_approve' },
      });
      expect(missing.status).toBe(400);
      expect(missing.body.code).toBe('invalid_request');
    });

    it('refuses a body nested deeper than 32 levels with a 400 naming the field, however deep', async () => {
      const agent = { 'x-api-key': acct.api_key, 'content-type': 'application/json' };
      for (const levels of [33, 5000, 100_000]) {
        const raw = `{"action_type":"purchase","title":"deep","metadata":${nested(levels)}}`;
        const r = await api.call('POST', '/actions', { headers: agent, raw });
        expect(r.status, `${levels} levels`).toBe(levels > 60_000 ? 413 : 400);
        if (r.status === 400) expect(r.body.detail).toMatch(/^metadata\.a\.a\.a…?: is nested deeper than 32 levels/);
      }
      const ok = await api.call('POST', '/actions', {
        headers: agent,
        raw: `{"action_type":"purchase","title":"ok","metadata":${nested(30)}}`,
      });
      expect(ok.status).toBe(200);
    });

    it('refuses a string with an unpaired surrogate with a 400 naming the field; a paired one is stored', async () => {
      const agent = { 'x-api-key': acct.api_key, 'content-type': 'application/json' };
      for (const [raw, field] of [
        ['{"action_type":"purchase","title":"t","description":"\\ud800"}', 'description'],
        ['{"action_type":"purchase","title":"\\udc00x"}', 'title'],
        ['{"action_type":"purchase","title":"t","metadata":{"a":["ok","\\ud83d"]}}', 'metadata.a.1'],
        ['{"action_type":"purchase","title":"t","metadata":{"k\\udfff":1}}', 'metadata.k\\udfff'],
      ] as const) {
        const r = await api.call('POST', '/actions', { headers: agent, raw });
        expect(r.status, raw).toBe(400);
        expect(r.body.code).toBe('malformed_json');
        expect(r.body.detail).toContain(`${field} holds an unpaired UTF-16 surrogate`);
      }
      const paired = await api.call('POST', '/actions', {
        headers: agent,
        raw: '{"action_type":"purchase","title":"\\ud83d\\ude00 and \\\\ud800 as text"}',
      });
      expect(paired.status).toBe(200);
      expect(paired.body.title).toBe('😀 and \\ud800 as text');
    });

    it('answers HEAD on a stream with its headers and no body, and OPTIONS with the allowed methods', async () => {
      const head = await fetch(`${stack.baseUrl}/device/events`, {
        method: 'HEAD',
        headers: { 'x-device-id': acct.device_id },
      });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(await head.text()).toBe('');
      const options = await fetch(`${stack.baseUrl}/actions`, { method: 'OPTIONS' });
      expect(options.status).toBe(204);
      expect(options.headers.get('allow')).toBe('POST, GET, HEAD, OPTIONS');
      const onItem = await fetch(`${stack.baseUrl}/rules/rul_x`, { method: 'OPTIONS' });
      expect(onItem.headers.get('allow')).toBe('DELETE, OPTIONS');
      const headGet = await fetch(`${stack.baseUrl}/actions`, {
        method: 'HEAD',
        headers: { 'x-api-key': acct.api_key },
      });
      expect(headGet.status).toBe(200);
    });

    it('answers a HEAD with oversized headers 431 without a body, and a GET 431 with one', async () => {
      const url = new URL(stack.baseUrl);
      const big = `X-Big: ${'a'.repeat(20_000)}\r\n`;
      const head = await rawHttp(stack.baseUrl, `HEAD /api/v1/actions HTTP/1.1\r\nHost: ${url.host}\r\n${big}\r\n`);
      expect(head).toMatch(/^HTTP\/1\.1 431 /);
      expect(head.split('\r\n\r\n')[1]).toBe('');
      const get = await rawHttp(stack.baseUrl, `GET /api/v1/actions HTTP/1.1\r\nHost: ${url.host}\r\n${big}\r\n`);
      expect(JSON.parse(get.split('\r\n\r\n')[1]!)).toEqual({
        detail: 'Request headers are too large',
        code: 'headers_too_large',
      });
    });
  });
}
