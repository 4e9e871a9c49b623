import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { configureMetrics, METRICS_CONTENT_TYPE, metricsText } from './registry.js';

export interface MetricsServer {
  /** The port it listens on (0 when metrics are off). */
  port: number;
  close(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** GET /healthz (the process answers) and GET /readyz (200 while `ready` says so, else 503) for probes. */
function answerProbe(path: string, response: ServerResponse, ready: () => Promise<boolean>): void {
  if (path === '/healthz') {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    return;
  }
  ready().then(
    (yes) =>
      response
        .writeHead(yes ? 200 : 503, { 'content-type': 'application/json' })
        .end(yes ? '{"ready":true}' : '{"ready":false,"detail":"Not serving: starting, stopping or no database"}'),
    () => response.writeHead(503, { 'content-type': 'application/json' }).end('{"ready":false}'),
  );
}

/**
 * The metrics endpoint of a service process that has no HTTP port of its own: GET /metrics on METRICS_PORT, with
 * GET /healthz and GET /readyz beside it for Kubernetes' probes (`ready`: whether the process serves; always when
 * not given). It does not keep the process alive, so a main needs no line to stop it. With METRICS=false nothing
 * listens.
 */
export async function startMetricsServer(options: {
  config: { METRICS: boolean; METRICS_PORT: number; HOST: string };
  log: Logger;
  ready?: () => Promise<boolean>;
}): Promise<MetricsServer> {
  const { config, log } = options;
  const ready = options.ready ?? (async () => true);
  configureMetrics({ enabled: config.METRICS });
  if (!config.METRICS) return { port: 0, close: async () => {} };
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]!;
    const readable = request.method === 'GET' || request.method === 'HEAD';
    if (readable && (path === '/healthz' || path === '/readyz')) {
      answerProbe(path, response, ready);
      return;
    }
    if (!readable || path !== '/metrics') {
      response
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"detail":"Only GET /metrics, /healthz and /readyz are served here"}');
      return;
    }
    metricsText().then(
      (text) =>
        response
          .writeHead(200, { 'content-type': METRICS_CONTENT_TYPE })
          .end(request.method === 'HEAD' ? undefined : text),
      (err: unknown) => {
        log.error({ err }, 'metrics scrape failed');
        response
          .writeHead(500, { 'content-type': 'application/json' })
          .end('{"detail":"Metrics could not be collected"}');
      },
    );
  });
  let port: number;
  try {
    port = await listen(server, config.METRICS_PORT, config.HOST);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const detail = `METRICS_PORT ${config.METRICS_PORT} on ${config.HOST} cannot be used (${code ?? String(err)}): set it to a free port, 0 for any, or METRICS=false`;
    throw Object.assign(new Error(detail), { code });
  }
  server.unref();
  log.info({ metrics_port: port }, 'metrics listening');
  return { port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
