import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCert, startUpstream, type SelfSignedCert, type Upstream } from '../../test/harness/upstream.js';
import { createOutboundClient, OutboundError, type OutboundOptions } from './index.js';

let cert: SelfSignedCert;
let https: Upstream;
let http: Upstream;

beforeAll(async () => {
  cert = selfSignedCert();
  const handler = (req: { url: string }, res: import('node:http').ServerResponse) => {
    if (req.url === '/redirect') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
      return res.end();
    }
    if (req.url === '/big') return res.end('x'.repeat(5000));
    if (req.url === '/big-chunked') {
      res.write('x'.repeat(3000));
      return setTimeout(() => res.end('x'.repeat(3000)), 10);
    }
    if (req.url === '/slow') return setTimeout(() => res.end('late'), 2000);
    res.writeHead(200, { 'content-type': 'text/plain', 'x-custom': 'yes', 'keep-alive': 'timeout=5' });
    res.end('hello');
  };
  https = await startUpstream({ tls: cert, handler });
  http = await startUpstream({ handler });
});

afterAll(async () => {
  await Promise.all([https.close(), http.close()]);
});

const base: OutboundOptions = {
  allowInsecureHosts: [],
  connectTimeoutMs: 1000,
  responseTimeoutMs: 500,
  maxResponseBytes: 4096,
};

async function failure(promise: Promise<unknown>): Promise<OutboundError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OutboundError);
  return err as OutboundError;
}

describe('outbound client', () => {
  it('refuses a loopback IP literal unless it is a configured development host', async () => {
    const strict = createOutboundClient({ ...base, extraCaCerts: [cert.cert] });
    const err = await failure(strict.request({ url: `${https.origin}/`, method: 'GET' }));
    expect(err.kind).toBe('refused');
    expect(err.detail).toMatch(/loopback/);
    await strict.close();
  });

  it('refuses a name that resolves to loopback, checking the resolved address', async () => {
    const strict = createOutboundClient({ ...base, allowInsecureHosts: ['127.0.0.1'], extraCaCerts: [cert.cert] });
    const before = https.seen.length;
    const err = await failure(strict.request({ url: `https://localhost:${https.port}/`, method: 'GET' }));
    expect(err.kind).toBe('refused');
    expect(err.detail).toMatch(/localhost resolves to a loopback address/);
    expect(https.seen.length).toBe(before);
    await strict.close();
  });

  it('refuses a name when any one of its addresses is private, even if another is public', async () => {
    const strict = createOutboundClient({
      ...base,
      resolve: async () => [
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.5', family: 4 },
      ],
    });
    const err = await failure(strict.request({ url: 'https://mixed.example/', method: 'GET' }));
    expect(err.kind).toBe('refused');
    expect(err.detail).toMatch(/10\.0\.0\.5/);
    await strict.close();
  });

  it('calls an https upstream trusted through extra CA certificates and drops hop-by-hop headers', async () => {
    const client = createOutboundClient({ ...base, allowInsecureHosts: ['127.0.0.1'], extraCaCerts: [cert.cert] });
    const res = await client.request({
      url: `${https.origin}/hi?x=1`,
      method: 'post',
      headers: { 'x-a': '1', connection: 'close', host: 'evil' },
      body: 'payload',
    });
    expect(res.statusCode).toBe(200);
    expect(res.body.toString()).toBe('hello');
    expect(res.headers['x-custom']).toBe('yes');
    expect(res.headers['keep-alive']).toBeUndefined();
    expect(res.headers.connection).toBeUndefined();
    const seen = https.seen.at(-1)!;
    expect(seen).toMatchObject({ method: 'POST', url: '/hi?x=1', body: 'payload' });
    expect(seen.headers['x-a']).toBe('1');
    expect(seen.headers.host).toBe(`127.0.0.1:${https.port}`);
    await client.close();
  });

  it('refuses http to a host that is not a development host, and allows it to one that is', async () => {
    const strict = createOutboundClient({ ...base, resolve: async () => [{ address: '93.184.216.34', family: 4 }] });
    expect((await failure(strict.request({ url: 'http://example.com/', method: 'GET' }))).detail).toMatch(/https/);
    await strict.close();
    const dev = createOutboundClient({ ...base, allowInsecureHosts: ['127.0.0.1'] });
    expect((await dev.request({ url: `${http.origin}/`, method: 'GET' })).statusCode).toBe(200);
    await dev.close();
  });

  it('returns a redirect instead of following it', async () => {
    const client = createOutboundClient({ ...base, allowInsecureHosts: ['127.0.0.1'] });
    const res = await client.request({ url: `${http.origin}/redirect`, method: 'GET' });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('http://169.254.169.254/latest/meta-data/');
    await client.close();
  });

  it('caps the response size, declared or streamed', async () => {
    const client = createOutboundClient({ ...base, allowInsecureHosts: ['127.0.0.1'] });
    expect((await failure(client.request({ url: `${http.origin}/big`, method: 'GET' }))).kind).toBe('too_large');
    expect((await failure(client.request({ url: `${http.origin}/big-chunked`, method: 'GET' }))).kind).toBe(
      'too_large',
    );
    await client.close();
  });

  it('gives up on a slow upstream', async () => {
    const client = createOutboundClient({ ...base, allowInsecureHosts: ['127.0.0.1'] });
    expect((await failure(client.request({ url: `${http.origin}/slow`, method: 'GET' }))).kind).toBe('timeout');
    await client.close();
  });

  it('trusts the extra CA certificates on every new connection, and nothing else beside the system roots', async () => {
    const trusting = createOutboundClient({ ...base, allowInsecureHosts: ['127.0.0.1'], extraCaCerts: [cert.cert] });
    const other = selfSignedCert();
    const trustingOther = createOutboundClient({
      ...base,
      allowInsecureHosts: ['127.0.0.1'],
      extraCaCerts: [other.cert],
    });
    // `connection: close` from the upstream makes each call open a connection of its own.
    const closing = await startUpstream({
      tls: cert,
      handler: (_req, res) => res.writeHead(200, { connection: 'close' }).end('fresh'),
    });
    try {
      for (let i = 0; i < 3; i++) {
        const res = await trusting.request({ url: `${closing.origin}/${i}`, method: 'GET' });
        expect(res.body.toString()).toBe('fresh');
      }
      const err = await failure(trustingOther.request({ url: `${closing.origin}/`, method: 'GET' }));
      expect(err.kind).toBe('upstream');
      expect(closing.seen).toHaveLength(3);
    } finally {
      await Promise.all([trusting.close(), trustingOther.close(), closing.close()]);
    }
  });

  it('reports an unreachable upstream without internals', async () => {
    const client = createOutboundClient({ ...base, allowInsecureHosts: ['127.0.0.1'] });
    const closed = await startUpstream({ handler: () => {} });
    await closed.close();
    const err = await failure(client.request({ url: `${closed.origin}/`, method: 'GET' }));
    expect(err.kind).toBe('upstream');
    expect(err.detail).toMatch(/could not be reached/);
    await client.close();
  });

  it('refuses a URL with user info and a non-http scheme', async () => {
    const client = createOutboundClient(base);
    expect((await failure(client.request({ url: 'https://user:pw@example.com/', method: 'GET' }))).kind).toBe(
      'refused',
    );
    expect((await failure(client.request({ url: 'file:///etc/passwd', method: 'GET' }))).kind).toBe('refused');
    expect((await failure(client.request({ url: 'https://[::ffff:127.0.0.1]/', method: 'GET' }))).kind).toBe('refused');
    await client.close();
  });
});
