import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer, listen } from './scripted-anthropic-model.js';

/**
 * An HTTP(S) proxy on loopback that refuses everything and records where a CLI tried to go, so a test run set up with
 * HTTPS_PROXY/HTTP_PROXY pointing here both stays off the outside network and shows which hosts the CLI would call.
 */
export interface EgressRecorder {
  url: string;
  /** `host:port` (CONNECT) or absolute URLs (plain HTTP), in arrival order. */
  attempts: string[];
  close(): Promise<void>;
}

export async function startEgressRecorder(): Promise<EgressRecorder> {
  const attempts: string[] = [];
  const server = createServer((req, res) => {
    attempts.push(req.url ?? '');
    res.writeHead(403, { 'content-type': 'text/plain' });
    res.end('outside network refused by the test');
  });
  server.on('connect', (req, socket) => {
    attempts.push(req.url ?? '');
    // A client that gives up first resets the socket; that is not the test's failure.
    socket.on('error', () => {});
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  await listen(server);
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, attempts, close: () => closeServer(server) };
}
