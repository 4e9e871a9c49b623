import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { AgentPrincipal } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { EncodedJson } from '@agent-auth/bus';
import { parseJsonBody, RETRY_AFTER_SECONDS, toHttpError } from './http-errors.js';
import { InProcessResponse } from './in-process-response.js';
import type { InProcessAnswered } from './observability.js';
import { type InProcessRoute, NO_CONTENT } from './route.js';

/** One call the MCP tools make of the API, for the agent their own request authenticated. */
export interface InProcessCall {
  method: string;
  /** The path, with the API's prefix, without the query. */
  path: string;
  query: URLSearchParams;
  body: string | undefined;
  headers: Record<string, string>;
  agent: AgentPrincipal;
  requestId: string;
  signal?: AbortSignal;
}

interface Entry {
  method: string;
  url: string;
  segments: string[];
  parameters: number;
  route: InProcessRoute;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

/** The path's parameters when it matches a route's segments (`:name` takes one segment), else undefined. */
function paramsOf(segments: string[], path: string[]): Record<string, string> | undefined {
  if (segments.length !== path.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const wanted = segments[i]!;
    if (wanted.startsWith(':')) {
      try {
        params[wanted.slice(1)] = decodeURIComponent(path[i]!);
      } catch {
        throw errors.invalidUrlEncoding();
      }
    } else if (wanted !== path[i]) return undefined;
  }
  return params;
}

/** The query as fastify's parser gives it: a value per name, an array for a name given more than once. */
function queryOf(search: URLSearchParams): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  if (search.size === 0) return query;
  for (const name of new Set(search.keys())) {
    const values = search.getAll(name);
    query[name] = values.length === 1 ? values[0]! : values;
  }
  return query;
}

/** Rejects with the signal's reason once it aborts, as a cancelled fetch does. */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * The agent's routes called in process, past fastify: the MCP tools' calls of the API go straight to the route's
 * own validation, handler and answer shaping (`runRoute`), as its HTTP requests do, without an HTTP request to
 * emulate. Collects the routes as they are declared; `serve` answers undefined for a call no agent route takes.
 */
export function createInProcessRoutes(
  app: FastifyInstance,
  options: { bodyLimit: number; log: FastifyBaseLogger; observe?: (call: InProcessAnswered) => void },
) {
  const entries: Entry[] = [];
  app.addHook('onRoute', (route) => {
    const inProcess = (route.config as { inProcess?: InProcessRoute } | undefined)?.inProcess;
    if (!inProcess) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const segments = route.url.split('/');
    const parameters = segments.filter((segment) => segment.startsWith(':')).length;
    for (const method of methods) entries.push({ method, url: route.url, segments, parameters, route: inProcess });
    // Literal segments before parameters, as the router prefers them.
    entries.sort((a, b) => a.parameters - b.parameters);
  });

  const find = (method: string, path: string) => {
    const parts = path.replace(/\/$/, '').split('/');
    for (const entry of entries) {
      if (entry.method !== method) continue;
      const params = paramsOf(entry.segments, parts);
      if (params) return { entry, params };
    }
    return undefined;
  };

  async function answer(entry: Entry, params: Record<string, string>, call: InProcessCall): Promise<Response> {
    const headers: Record<string, string> = { ...JSON_HEADERS };
    const limit = entry.route.bodyLimit ?? options.bodyLimit;
    if (call.body !== undefined && Buffer.byteLength(call.body) > limit) throw errors.bodyTooLarge(limit);
    const result = await entry.route.run({
      principal: call.agent,
      body: call.body === undefined ? undefined : parseJsonBody(call.body),
      query: queryOf(call.query),
      params,
      requestId: call.requestId,
      onClientGone: (listener) => call.signal?.addEventListener('abort', listener, { once: true }),
      method: call.method,
      setHeader: (name, value) => {
        headers[name.toLowerCase()] = value;
      },
      request: undefined,
      headers: call.headers,
    });
    if (result === NO_CONTENT) return new InProcessResponse(null, 204, {}).asResponse();
    const body = result instanceof EncodedJson ? result.bytes : { value: result };
    return new InProcessResponse(body, 200, headers).asResponse();
  }

  /** The answer the API gives, as a fetch Response: an error the way the error handler writes it. */
  async function refusal(err: unknown, call: InProcessCall, bodyLimit: number): Promise<Response> {
    const mapped = toHttpError(err as Error, bodyLimit);
    if (mapped.status >= 500) options.log.error({ reqId: call.requestId, err }, 'in-process request failed');
    const headers: Record<string, string> = { ...JSON_HEADERS };
    if (mapped.status === 503 || mapped.status === 504) headers['retry-after'] = RETRY_AFTER_SECONDS;
    return new InProcessResponse(JSON.stringify(mapped.toBody()), mapped.status, headers).asResponse();
  }

  return {
    async serve(call: InProcessCall): Promise<Response | undefined> {
      let found: ReturnType<typeof find>;
      try {
        found = find(call.method, call.path);
      } catch (err) {
        return refusal(err, call, options.bodyLimit);
      }
      if (!found) return undefined;
      const { entry, params } = found;
      const started = performance.now();
      let answered: Response | undefined;
      try {
        answered = await unlessAborted(answer(entry, params, call), call.signal);
        return answered;
      } catch (err) {
        if (call.signal?.aborted && err === call.signal.reason) throw err;
        answered = await refusal(err, call, entry.route.bodyLimit ?? options.bodyLimit);
        return answered;
      } finally {
        options.observe?.({
          reqId: call.requestId,
          method: call.method,
          url: `${call.path}${call.query.size ? `?${call.query}` : ''}`,
          route: entry.url,
          // A call its caller gave up on (the tool call was cancelled) is written as nginx writes a closed client.
          status: answered?.status ?? 499,
          ms: Math.round((performance.now() - started) * 10) / 10,
        });
      }
    },
  };
}
export type InProcessRoutes = ReturnType<typeof createInProcessRoutes>;
