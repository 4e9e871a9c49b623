import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import {
  configureMetrics,
  METRICS_CONTENT_TYPE,
  metricsEnabled,
  metricsText,
  recordHttpRequest,
} from '@agent-auth/metrics';

const refusals = new WeakMap<FastifyRequest, string>();

/** Keeps why a request was refused (4xx), for its access line. */
export function noteRefusal(request: FastifyRequest, detail: string): void {
  refusals.set(request, detail);
}

/**
 * One access-log line per request (when LOG_REQUESTS is on) and the latency histogram by route pattern, both
 * from one onResponse hook; fastify's own two lines per request are switched off where the gateway is built.
 */
export function installRequestObservation(
  app: FastifyInstance,
  options: { logRequests: boolean; metrics: boolean },
): void {
  configureMetrics({ enabled: options.metrics });
  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, never the raw URL, so the label set stays small whatever callers send.
    const route = request.routeOptions.url ?? 'unmatched';
    const ms = reply.elapsedTime;
    recordHttpRequest(request.method, route, reply.statusCode, ms / 1000);
    const detail = refusals.get(request);
    if (options.logRequests) {
      const line = {
        reqId: request.id,
        method: request.method,
        url: request.url,
        route,
        status: reply.statusCode,
        ms: Math.round(ms * 10) / 10,
        detail,
      };
      request.log.info(line, 'request');
    } else if (detail !== undefined) {
      request.log.info({ reqId: request.id, status: reply.statusCode, detail }, 'request refused');
    }
  });
}

/** A call the MCP tools made in process, answered: the route pattern, the status and how long it took. */
export interface InProcessAnswered {
  reqId: string;
  method: string;
  url: string;
  route: string;
  status: number;
  ms: number;
}

/**
 * The access line of a call the MCP tools made of the API in process (when LOG_REQUESTS is on): the outer /mcp
 * request has its own line and metrics; this one says which route served the tool, how, and how long it held.
 */
export function inProcessCallObserver(
  log: FastifyBaseLogger,
  options: { logRequests: boolean },
): ((call: InProcessAnswered) => void) | undefined {
  if (!options.logRequests) return undefined;
  return (call) => log.info({ ...call, in_process: true }, 'request');
}

/** GET /metrics: the Prometheus text of this process (every service's metrics in all-in-one mode). */
export function metricsRoutes(app: FastifyInstance): void {
  if (!metricsEnabled()) return;
  app.get('/metrics', async (_request, reply) =>
    reply.header('content-type', METRICS_CONTENT_TYPE).send(await metricsText()),
  );
}
