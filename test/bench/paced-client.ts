// The paced load's HTTP client: keep-alive HTTP/1.1 over plain sockets, one request at a time per connection, the
// request's bytes written at once and the answer read only as far as its status and its end. The generator shares
// the machine's two cores with the server it measures, so what it spends on a request is taken from that server:
// undici's pool cost the generator about 0.10 ms of CPU per request at 2,400-3,400/s, this client 0.05-0.06, and the
// reference's p50 at half its rate went from 2.0-2.5 to 1.7-1.8 ms. autocannon does the same for the full-speed
// runs, but has no open-loop pace.
import { connect, type Socket } from 'node:net';

/** A fixed set of keep-alive connections to one origin, each carrying one request at a time. */
export interface PacedClient {
  /** The bytes of a POST of a JSON body, to send once or many times. */
  request(path: string, headers: Record<string, string>, body: string): Buffer;
  /** Sends a request's bytes and answers the response's status once the whole response has arrived. */
  send(request: Buffer): Promise<number>;
  /** POSTs a JSON body (request, then send). */
  post(path: string, headers: Record<string, string>, body: string): Promise<number>;
  close(): void;
}

interface Connection {
  socket: Socket;
  received: Buffer;
  answer?: { resolve: (status: number) => void; reject: (err: unknown) => void };
}

const HEAD_END = Buffer.from('\r\n\r\n');
const LAST_CHUNK = Buffer.from('0\r\n\r\n');

/**
 * Where a response in `received` ends, or -1 while it is incomplete: after its Content-Length, or after the last
 * chunk of a chunked body (chunk data is not scanned for it: a JSON body holds no such line).
 */
export function responseEnd(received: Buffer): number {
  const headEnd = received.indexOf(HEAD_END);
  if (headEnd < 0) return -1;
  const head = received.subarray(0, headEnd).toString('latin1');
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (length) {
    const end = headEnd + 4 + Number(length[1]);
    return received.length >= end ? end : -1;
  }
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
    const last = received.indexOf(LAST_CHUNK, headEnd + 4);
    return last < 0 ? -1 : last + LAST_CHUNK.length;
  }
  return headEnd + 4; // no body (204, 304)
}

/** Opens (lazily) up to `connections` keep-alive connections to `origin` for the paced load. */
export function pacedClient(origin: string, connections: number): PacedClient {
  const url = new URL(origin);
  const idle: Connection[] = [];
  const queued: Array<(connection: Connection) => void> = [];
  const all = new Set<Connection>();

  const release = (connection: Connection) => {
    const next = queued.shift();
    if (next) next(connection);
    else idle.push(connection);
  };
  const drop = (connection: Connection, err: unknown) => {
    if (!all.delete(connection)) return;
    const at = idle.indexOf(connection);
    if (at >= 0) idle.splice(at, 1);
    connection.answer?.reject(err);
    connection.answer = undefined;
    connection.socket.destroy();
    // A request queued for a connection gets a new one in its place.
    const next = queued.shift();
    if (next) next(open());
  };
  const open = (): Connection => {
    const socket = connect({ host: url.hostname, port: Number(url.port), noDelay: true });
    const connection: Connection = { socket, received: Buffer.alloc(0) };
    all.add(connection);
    socket.on('data', (chunk: Buffer) => {
      connection.received = connection.received.length ? Buffer.concat([connection.received, chunk]) : chunk;
      const end = responseEnd(connection.received);
      if (end < 0) return;
      const status = Number(connection.received.subarray(9, 12).toString('latin1'));
      connection.received = connection.received.subarray(end);
      const answer = connection.answer;
      connection.answer = undefined;
      release(connection);
      answer?.resolve(status);
    });
    socket.on('error', (err) => drop(connection, err));
    socket.on('close', () => drop(connection, new Error('the server closed the connection')));
    return connection;
  };
  const acquire = (): Promise<Connection> => {
    const connection = idle.pop();
    if (connection) return Promise.resolve(connection);
    if (all.size < connections) return Promise.resolve(open());
    return new Promise((resolve) => queued.push(resolve));
  };

  const request = (path: string, headers: Record<string, string>, body: string): Buffer => {
    let head = `POST ${path} HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    return Buffer.from(`${head}\r\n${body}`);
  };
  const send = async (bytes: Buffer): Promise<number> => {
    const connection = await acquire();
    return new Promise<number>((resolve, reject) => {
      connection.answer = { resolve, reject };
      connection.socket.write(bytes);
    });
  };

  return {
    request,
    send,
    post: (path, headers, body) => send(request(path, headers, body)),
    close() {
      for (const connection of [...all]) drop(connection, new Error('the client was closed'));
    },
  };
}
