import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { pacedClient, responseEnd } from './paced-client.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

async function serve(
  handler: Parameters<typeof createServer>[1],
): Promise<{ origin: string; connections: () => number }> {
  const server = createServer(handler);
  let connections = 0;
  server.on('connection', () => connections++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push(server);
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections };
}

const readBody = async (req: NodeJS.ReadableStream) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body;
};

describe('responseEnd', () => {
  const head = 'HTTP/1.1 201 Created\r\ncontent-type: application/json\r\n';

  it('waits for the whole Content-Length body, and ends there', () => {
    expect(responseEnd(Buffer.from(`${head}content-length: 4\r\n\r\n{"a`))).toBe(-1);
    const whole = `${head}content-length: 4\r\n\r\n{"a"`;
    expect(responseEnd(Buffer.from(`${whole}HTTP/1.1`))).toBe(whole.length);
  });

  it('waits for the last chunk of a chunked body', () => {
    const start = `${head}transfer-encoding: chunked\r\n\r\n2\r\n{}\r\n`;
    expect(responseEnd(Buffer.from(start))).toBe(-1);
    expect(responseEnd(Buffer.from(`${start}0\r\n\r\n`))).toBe(start.length + 5);
  });

  it('waits for the end of the head', () => {
    expect(responseEnd(Buffer.from(`${head}content-length: 0\r\n`))).toBe(-1);
  });
});

describe('pacedClient', () => {
  it('sends the body and headers, answers each status, and keeps its connections open', async () => {
    const seen: Array<{ body: string; key: string | undefined }> = [];
    const server = await serve(async (req, res) => {
      seen.push({ body: await readBody(req), key: req.headers['x-api-key'] as string | undefined });
      res.writeHead(seen.length % 2 ? 201 : 400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ n: seen.length, padding: 'x'.repeat(70_000) })); // several chunks on the socket
    });
    const client = pacedClient(server.origin, 2);
    const statuses = [];
    for (let round = 0; round < 3; round++)
      statuses.push(...(await Promise.all([1, 2].map(() => client.post('/actions', { 'x-api-key': 'k' }, '{"a":1}')))));
    client.close();
    expect(statuses.sort()).toEqual([201, 201, 201, 400, 400, 400]);
    expect(seen).toHaveLength(6);
    expect(seen.every((s) => s.body === '{"a":1}' && s.key === 'k')).toBe(true);
    expect(server.connections()).toBe(2);
  });

  it('reads a chunked response to its end before the next request on that connection', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"part":');
      setTimeout(() => res.end('1}'), 5);
    });
    const client = pacedClient(server.origin, 1);
    expect(await Promise.all([1, 2, 3].map(() => client.post('/', {}, '{}')))).toEqual([200, 200, 200]);
    client.close();
    expect(server.connections()).toBe(1);
  });

  it('refuses the request whose connection the server closed, and opens a new one for the next', async () => {
    let calls = 0;
    const server = await serve((req, res) => {
      calls++;
      if (calls === 1) req.socket.destroy();
      else res.writeHead(204).end();
    });
    const client = pacedClient(server.origin, 1);
    await expect(client.post('/', {}, '{}')).rejects.toThrow();
    expect(await client.post('/', {}, '{}')).toBe(204);
    client.close();
    expect(server.connections()).toBe(2);
  });
});
