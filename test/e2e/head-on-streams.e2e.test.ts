import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../infra/database.js';
import { apiClient, type ApiClient } from '../harness/http.js';
import { openEventStream } from '../harness/sse.js';
import { parseExposition, sampleValue } from '../harness/prometheus-text.js';
import { startStack, type Stack } from '../harness/stack.js';

// Short, so that a stream left open by a HEAD would write a heartbeat well within the test's wait.
const HEARTBEAT_MS = 200;
const QUIET_MS = 3 * HEARTBEAT_MS;

/** One HTTP/1.1 connection spoken by hand, so that what the server writes and when it hangs up is seen as it is. */
class RawConnection {
  private received = '';
  private ended = false;
  private readonly waiters = new Set<() => void>();

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => this.notify(() => (this.received += chunk)));
    socket.on('end', () => this.notify(() => (this.ended = true)));
    socket.on('close', () => this.notify(() => (this.ended = true)));
  }

  static open(origin: string): Promise<RawConnection> {
    const { hostname, port } = new URL(origin);
    return new Promise((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port) }, () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  private notify(change: () => void): void {
    change();
    for (const waiter of this.waiters) waiter();
  }

  send(method: string, path: string, headers: Record<string, string>): void {
    const lines = [
      `${method} ${path} HTTP/1.1`,
      'host: 127.0.0.1',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ];
    this.socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  }

  /** Waits until `done` holds of what was received (true) or `ms` pass (false). */
  until(done: (received: string, ended: boolean) => boolean, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const check = () => {
        if (!done(this.received, this.ended)) return;
        finish(true);
      };
      const timer = setTimeout(() => finish(false), ms);
      const finish = (result: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(result);
      };
      this.waiters.add(check);
      check();
    });
  }

  get text(): string {
    return this.received;
  }

  get hungUp(): boolean {
    return this.ended;
  }

  destroy(): void {
    this.socket.destroy();
  }
}

const headerBlockEnd = (received: string) => received.indexOf('\r\n\r\n');

describe('HEAD on the streaming and held routes', () => {
  let stack: Stack;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let api: ApiClient;
  let origin: string;
  let apiPath: string;
  let acct: Awaited<ReturnType<ApiClient['newAccount']>>;

  beforeAll(async () => {
    db = await createTestDatabase();
    stack = await startStack({
      mode: 'all-in-one',
      databaseUrl: db.url,
      name: 'head-on-streams',
      env: { DEVICE_STREAM_HEARTBEAT_MS: String(HEARTBEAT_MS) },
    });
    api = apiClient(stack.baseUrl);
    origin = new URL(stack.baseUrl).origin;
    apiPath = new URL(stack.baseUrl).pathname;
    acct = await api.newAccount();
  });
  afterAll(async () => {
    await stack?.stop();
    await db?.drop();
  });

  const openStreams = async () => {
    const text = await (await fetch(`${origin}/metrics`)).text();
    return sampleValue(parseExposition(text), 'agent_auth_event_streams_open');
  };

  const streams = () => [
    { path: '/device/events', headers: { 'x-device-id': acct.device_id } },
    { path: '/agent/events', headers: { 'x-api-key': acct.api_key } },
    { path: '/agent/events', headers: { 'x-api-key': acct.api_key, 'last-event-id': 'msg_0000000000000000000000' } },
  ];

  it('counts the streams it holds open (the gauge the other tests read)', async () => {
    expect(await openStreams()).toBe(0);
    const stream = await openEventStream(`${stack.baseUrl}/device/events`, { 'x-device-id': acct.device_id });
    expect(await openStreams()).toBe(1);
    stream.close();
    await expect.poll(openStreams, { timeout: 2000 }).toBe(0);
  });

  it('with Connection: close, answers the headers of the stream with no body and hangs up at once', async () => {
    for (const { path, headers } of streams()) {
      const connection = await RawConnection.open(origin);
      try {
        const started = Date.now();
        connection.send('HEAD', apiPath + path, { ...headers, connection: 'close' });
        const hungUp = await connection.until((_, ended) => ended, 2000);
        expect(hungUp, `${path}: the server hung up`).toBe(true);
        expect(Date.now() - started, path).toBeLessThan(1000);
        const [head, body] = [
          connection.text.slice(0, headerBlockEnd(connection.text)),
          connection.text.slice(headerBlockEnd(connection.text) + 4),
        ];
        expect(head, path).toMatch(/^HTTP\/1\.1 200 /);
        expect(head, path).toMatch(/\r\ncontent-type: text\/event-stream/i);
        expect(head, path).toMatch(/\r\nconnection: close/i);
        expect(body, path).toBe('');
      } finally {
        connection.destroy();
      }
    }
    expect(await openStreams()).toBe(0);
  });

  it('on a kept-alive connection, ends the HEAD answer: nothing follows it and the next request is answered', async () => {
    for (const { path, headers } of streams()) {
      const connection = await RawConnection.open(origin);
      try {
        connection.send('HEAD', apiPath + path, headers);
        expect(await connection.until((text) => headerBlockEnd(text) >= 0, 2000), path).toBe(true);
        // A stream left open would write its heartbeat comments here.
        await connection.until(() => false, QUIET_MS);
        expect(connection.text.slice(headerBlockEnd(connection.text) + 4), path).toBe('');
        expect(connection.hungUp, path).toBe(false);
        expect(await openStreams(), path).toBe(0);

        connection.send('GET', '/healthz', { connection: 'close' });
        const answered = await connection.until((text, ended) => ended && /\r\n\r\nHTTP\/1\.1 200 /.test(text), 2000);
        expect(answered, `${path}: the next request on the connection was answered`).toBe(true);
      } finally {
        connection.destroy();
      }
    }
  });

  it('answers HEAD of a held read at once, without holding it for `wait`', async () => {
    const created = await api
      .agent(acct.api_key)
      .post('/actions', { action_type: 'purchase', title: 'Held', amount: 50, risk_level: 'critical' });
    expect(created.body.status).toBe('pending');
    const connection = await RawConnection.open(origin);
    try {
      const started = Date.now();
      connection.send('HEAD', `${apiPath}/actions/${created.body.id}?wait=30`, {
        'x-api-key': acct.api_key,
        connection: 'close',
      });
      expect(await connection.until((_, ended) => ended, 5000)).toBe(true);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(connection.text).toMatch(/^HTTP\/1\.1 200 /);
      expect(connection.text.slice(headerBlockEnd(connection.text) + 4)).toBe('');
    } finally {
      connection.destroy();
    }
  });
});
