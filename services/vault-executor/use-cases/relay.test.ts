import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RelayLimits, RelayRequest, RelayResult } from '@agent-auth/contracts';
import { createOutboundClient, createRelayedClient, OutboundError, type OutboundClient } from '@agent-auth/outbound';
import { startUpstream, type Upstream } from '../../../test/harness/upstream.js';
import { createRelay } from './relay.js';

// The relayed client of a service, the wire between them parsed by the contract both ends use, and the relay in the
// executor making real calls to a server on loopback.
let upstream: Upstream;
const clients: OutboundClient[] = [];

beforeAll(async () => {
  upstream = await startUpstream({
    handler: (req, res) => {
      if (req.url === '/slow') return void setTimeout(() => res.end('late'), 1500);
      if (req.url === '/big') return void res.end('x'.repeat(5000));
      res.writeHead(201, { 'content-type': 'application/octet-stream', 'x-seen': req.headers['x-signature'] ?? '' });
      res.end(Buffer.from([0, 1, 2, 254, 255]));
    },
  });
});
afterAll(async () => {
  await upstream.close();
  await Promise.all(clients.map((c) => c.close()));
});

const relay = createRelay({
  outboundFor: (limits: RelayLimits) => {
    const client = createOutboundClient({
      allowInsecureHosts: ['127.0.0.1'],
      connectTimeoutMs: limits.connect_timeout_ms,
      responseTimeoutMs: limits.response_timeout_ms,
      maxResponseBytes: limits.max_response_bytes,
    });
    clients.push(client);
    return client;
  },
});

const relayed = (send = async (call: unknown) => RelayResult.parse(await relay(RelayRequest.parse(call)))) =>
  createRelayedClient({ connectTimeoutMs: 1000, responseTimeoutMs: 500, maxResponseBytes: 4096, send });

async function failureOf(promise: Promise<unknown>): Promise<OutboundError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OutboundError);
  return err as OutboundError;
}

describe('outbound calls relayed through the vault executor', () => {
  it('carry the method, headers and a binary body there, and the status, headers and body back', async () => {
    const before = upstream.seen.length;
    const res = await relayed().request({
      url: `${upstream.origin}/hook`,
      method: 'POST',
      headers: { 'x-signature': 'v1,abc', 'content-type': 'application/json' },
      body: Buffer.from('{"id":"act_1"}'),
    });
    expect(res.statusCode).toBe(201);
    expect(res.headers['x-seen']).toBe('v1,abc');
    expect([...res.body]).toEqual([0, 1, 2, 254, 255]);
    expect(upstream.seen.length).toBe(before + 1);
    expect(upstream.seen.at(-1)).toMatchObject({ method: 'POST', url: '/hook', body: '{"id":"act_1"}' });
  });

  it("answer the executor's refusals, time-outs and size limits as the service's own client would", async () => {
    const privateHost = await failureOf(relayed().request({ url: 'https://10.0.0.1/hook', method: 'POST' }));
    expect(privateHost.kind).toBe('refused');
    expect(privateHost.detail).toMatch(/private/);
    const plainHttp = await failureOf(relayed().request({ url: 'http://example.com/hook', method: 'POST' }));
    expect(plainHttp.kind).toBe('refused');
    expect((await failureOf(relayed().request({ url: `${upstream.origin}/slow`, method: 'GET' }))).kind).toBe(
      'timeout',
    );
    expect((await failureOf(relayed().request({ url: `${upstream.origin}/big`, method: 'GET' }))).kind).toBe(
      'too_large',
    );
  });

  it('fail as an upstream failure, with a detail safe to store, when the relay cannot be reached', async () => {
    const unreachable = relayed(async () => {
      throw new Error('no responders for vault.v1.relay');
    });
    const err = await failureOf(unreachable.request({ url: `${upstream.origin}/hook`, method: 'POST' }));
    expect(err.kind).toBe('upstream');
    expect(err.detail).toBe('the outbound relay (the vault executor) did not answer');
  });
});
