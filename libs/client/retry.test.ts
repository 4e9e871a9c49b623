// The service does not rate-limit yet, so the 429 rule is checked against a loopback HTTP server that speaks the
// service's error format (docs/errors.md: Retry-After in whole seconds, {"detail"} bodies).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentAuthClient, QuotaExceededError, RateLimitedError, UpstreamError } from './index.js';

let server: Server;
let baseUrl: string;
let script: Array<{ status: number; headers?: Record<string, string>; body: unknown }> = [];
const seen: number[] = [];
const keys: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(Date.now());
    keys.push(String(req.headers['idempotency-key'] ?? ''));
    const next = script.shift() ?? { status: 200, body: { actions: [] } };
    res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers });
    res.end(JSON.stringify(next.body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const limited = (seconds: string) => ({
  status: 429,
  headers: { 'retry-after': seconds },
  body: { detail: 'Rate limit exceeded' },
});

describe('client retry and status mapping', () => {
  it('sends an Idempotency-Key on every create and retries 502/503/504 with the same key', async () => {
    keys.length = 0;
    script = [
      { status: 503, body: { detail: 'down' } },
      { status: 504, body: { detail: 'slow' } },
      { status: 502, body: { detail: 'bad' } },
      { status: 200, body: { id: 'act_1', status: 'pending' } },
    ];
    const client = new AgentAuthClient({ apiKey: 'aa_x', baseUrl });
    expect(await client.requestAction({ action_type: 'system', title: 'x' })).toMatchObject({ id: 'act_1' });
    expect(keys).toHaveLength(4);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    await client.requestAction({ action_type: 'system', title: 'y' }, { idempotencyKey: 'mine-1' });
    expect(keys.at(-1)).toBe('mine-1');
  });

  it('retries a create after a network error, and gives up after maxRetries', async () => {
    let calls = 0;
    const failing: typeof fetch = async (input, init) => {
      if (++calls < 3) throw new TypeError('fetch failed');
      return fetch(input, init);
    };
    script = [{ status: 200, body: { id: 'act_2', status: 'pending' } }];
    const client = new AgentAuthClient({ apiKey: 'aa_x', baseUrl, fetch: failing });
    expect(await client.requestAction({ action_type: 'system', title: 'x' })).toMatchObject({ id: 'act_2' });
    expect(calls).toBe(3);
    const never = new AgentAuthClient({
      apiKey: 'aa_x',
      baseUrl,
      maxRetries: 1,
      fetch: async () => {
        throw new TypeError('fetch failed');
      },
    });
    await expect(never.requestAction({ action_type: 'system', title: 'x' })).rejects.toThrow('fetch failed');
  });

  it('retries a 429 after Retry-After seconds and then succeeds', async () => {
    seen.length = 0;
    script = [limited('1'), { status: 200, body: { actions: [] } }];
    const client = new AgentAuthClient({ apiKey: 'aa_x', baseUrl });
    expect(await client.getHistory(1)).toEqual([]);
    expect(seen).toHaveLength(2);
    expect(seen[1]! - seen[0]!).toBeGreaterThanOrEqual(950);
  });

  it('gives up after maxRetries with RateLimitedError carrying retryAfterSeconds', async () => {
    seen.length = 0;
    script = [limited('0'), limited('0'), limited('7')];
    const client = new AgentAuthClient({ apiKey: 'aa_x', baseUrl, maxRetries: 2 });
    const err = await client.getHistory().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err).toMatchObject({ status: 429, detail: 'Rate limit exceeded', retryAfterSeconds: 7 });
    expect(seen).toHaveLength(3);
  });

  it('maps 402 and 502 to their classes', async () => {
    script = [
      { status: 402, body: { detail: 'Monthly quota of 25 actions reached' } },
      { status: 502, body: { detail: 'Upstream timed out' } },
    ];
    const client = new AgentAuthClient({ apiKey: 'aa_x', baseUrl });
    await expect(client.requestAction({ action_type: 'system', title: 'x' })).rejects.toBeInstanceOf(
      QuotaExceededError,
    );
    await expect(client.executeApproved('act_1')).rejects.toMatchObject({
      name: 'UpstreamError',
      status: 502,
      detail: 'Upstream timed out',
    });
    expect(UpstreamError.name).toBe('UpstreamError');
  });
});
