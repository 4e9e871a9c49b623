// How waitForResult behaves against services that cannot hold a wait: one that refuses `wait` (400 naming it)
// and one that predates it and ignores the parameter. Both are loopback servers speaking the service's format;
// the held wait against the real service is covered end to end (test/e2e/client.e2e.test.ts).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentAuthClient, WaitTimeoutError } from './index.js';

let server: Server;
let baseUrl: string;
let behaviour: 'refuses-wait' | 'ignores-wait' = 'refuses-wait';
let approveAfter = 0;
const seen: Array<{ url: string; at: number }> = [];

const action = (status: string) => ({ id: 'act_1', status, expires_at: new Date(Date.now() + 60_000).toISOString() });

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url!, at: Date.now() });
    res.setHeader('content-type', 'application/json');
    if (behaviour === 'refuses-wait' && req.url!.includes('wait=')) {
      res.writeHead(400).end(JSON.stringify({ detail: 'wait: unknown query parameter' }));
      return;
    }
    res.writeHead(200).end(JSON.stringify(action(seen.length > approveAfter ? 'approved' : 'pending')));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('waitForResult against a service without held waits', () => {
  it('falls back to polling every intervalMs when the service refuses wait, and asks no more', async () => {
    behaviour = 'refuses-wait';
    seen.length = 0;
    approveAfter = 4;
    const client = new AgentAuthClient({ apiKey: 'aa_x', baseUrl });
    const done = await client.waitForResult('act_1', { intervalMs: 150, timeoutMs: 10_000 });
    expect(done.status).toBe('approved');
    expect(seen.map((s) => s.url)).toEqual([
      '/api/v1/actions/act_1',
      '/api/v1/actions/act_1?wait=9',
      '/api/v1/actions/act_1',
      '/api/v1/actions/act_1',
      '/api/v1/actions/act_1',
    ]);
    expect(seen[4]!.at - seen[3]!.at).toBeGreaterThanOrEqual(140);

    seen.length = 0;
    approveAfter = 1;
    await client.waitForResult('act_1', { intervalMs: 50 });
    expect(seen.every((s) => !s.url.includes('wait='))).toBe(true);
  });

  it('keeps to intervalMs between reads when the service ignores wait and answers at once', async () => {
    behaviour = 'ignores-wait';
    seen.length = 0;
    approveAfter = 3;
    const client = new AgentAuthClient({ apiKey: 'aa_x', baseUrl });
    const done = await client.waitForResult('act_1', { intervalMs: 200, timeoutMs: 10_000 });
    expect(done.status).toBe('approved');
    expect(seen).toHaveLength(4);
    for (let i = 2; i < seen.length; i++) expect(seen[i]!.at - seen[i - 1]!.at).toBeGreaterThanOrEqual(190);
  });

  it('keeps its time-out and abort behaviour', async () => {
    behaviour = 'ignores-wait';
    approveAfter = Infinity;
    const client = new AgentAuthClient({ apiKey: 'aa_x', baseUrl });
    const timedOut = await client.waitForResult('act_1', { intervalMs: 100, timeoutMs: 350 }).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(WaitTimeoutError);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('agent stopped')), 100);
    await expect(client.waitForResult('act_1', { signal: controller.signal })).rejects.toThrow('agent stopped');
  });
});
