// The vault case's upstream API in a process of its own, as an agent's upstream is: an HTTPS server on loopback
// answering every request with the same small JSON body (vault-execution.ts). Its certificate comes in the
// environment (UPSTREAM_CERT, UPSTREAM_KEY: PEM).
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';

const body = JSON.stringify({ id: 42, name: 'thing', tags: ['a', 'b'] });
const server = createServer({ key: process.env.UPSTREAM_KEY, cert: process.env.UPSTREAM_CERT }, (req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ msg: 'upstream listening', url: `https://127.0.0.1:${port}` })}\n`);
});
const stop = () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
