import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A reverse proxy on the loopback that adds an `Authorization` header (as `authorization()` gives it) to every request, for a client that has no way
 * to send one (the MCP conformance runner). It stands where a load balancer would: its address is the service's
 * public one (PUBLIC_BASE_URL), and requests and answers go through as they are, Host included. Start it first, then
 * the service behind it (`forwardTo`).
 */
export async function startCredentialedProxy(authorization: () => string) {
  let upstream: URL | undefined;
  const server: Server = createServer((req, res) => {
    if (!upstream) return void res.writeHead(503).end();
    const forwarded = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: authorization() },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    res.on('close', () => forwarded.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    forwardTo(target: string) {
      upstream = new URL(target);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
