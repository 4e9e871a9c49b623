import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { AgentAuthClient } from '@agent-auth/client';
import type { AgentPrincipal } from '@agent-auth/contracts';
import type { InProcessRoutes } from './in-process-routes.js';

/** The prefix of the handles that stand for an already authenticated agent inside this process. */
const HANDLE_PREFIX = 'aai_';
/** The origin of the in-process client's base URL: never resolved, the requests go to the app itself. */
const IN_PROCESS_ORIGIN = 'http://in-process';
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

type HeaderValue = string | string[] | number | undefined;

/** Response headers as the Fetch API takes them (light-my-request gives arrays and numbers). */
function fetchHeaders(headers: Record<string, HeaderValue>): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.append(name, String(v));
  }
  return out;
}

/**
 * Request headers of a fetch call as a plain object, without the Idempotency-Key the client puts on every create:
 * nothing is lost between a tool and the app in one process, and the client here never retries (below), so a key
 * would only have the create keep its answer for a replay that cannot come (one more write per call). A create is
 * still retried across the bus with the gateway's own key, as any REST create is.
 */
function plainHeaders(init: RequestInit | undefined): Record<string, string> {
  const given = init?.headers;
  // The client sends a plain object: read it as it is rather than through a Headers (a cost on every tool call).
  const entries =
    given === undefined || given instanceof Headers || Array.isArray(given)
      ? [...new Headers(given).entries()]
      : Object.entries(given);
  const headers: Record<string, string> = {};
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    if (lower !== 'idempotency-key') headers[lower] = typeof value === 'string' ? value : value.join(', ');
  }
  return headers;
}

const NO_QUERY = new URLSearchParams();

/**
 * The path and query of a call: the client's URLs (the in-process base URL and a path its methods encoded) are
 * split as they are, without a URL parsed per call; anything else is parsed.
 */
function urlOf(input: string | URL | Request): { pathname: string; search: string; searchParams: URLSearchParams } {
  if (typeof input === 'string' && input.startsWith(`${IN_PROCESS_ORIGIN}/`)) {
    const rest = input.slice(IN_PROCESS_ORIGIN.length);
    const mark = rest.indexOf('?');
    if (mark < 0 && !rest.includes('#')) return { pathname: rest, search: '', searchParams: NO_QUERY };
  }
  return new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
}

/**
 * The gateway's own API called from inside the process, for the MCP tools: an AgentAuthClient whose `fetch` hands
 * each request to the agent's route in process (in-process-routes.ts), or to the app (fastify's inject, no socket)
 * for anything else, authenticated by a handle that stands for the agent the outer request already authenticated.
 * A handle lives in this process's memory only, for the outer request's life.
 */
export function createInProcessApi(app: FastifyInstance, options: { prefix: string; routes: InProcessRoutes }) {
  const baseUrl = `${IN_PROCESS_ORIGIN}${options.prefix}`;
  const callers = new Map<string, AgentPrincipal>();
  // A handle is this process's secret and a count: unguessable, and no random draw per request.
  const secret = randomBytes(24).toString('base64url');
  let issued = 0;

  const inject = async (
    requestId: string,
    url: { pathname: string; search: string },
    init: RequestInit | undefined,
  ) => {
    const res = await app.inject({
      method: (init?.method ?? 'GET') as InjectOptions['method'],
      url: url.pathname + url.search,
      headers: { ...plainHeaders(init), 'x-request-id': requestId },
      ...(typeof init?.body === 'string' ? { payload: init.body } : {}),
      ...(init?.signal ? { signal: init.signal } : {}),
    });
    const body = NULL_BODY_STATUSES.has(res.statusCode) ? null : res.rawPayload;
    return new Response(body, { status: res.statusCode, headers: fetchHeaders(res.headers) });
  };

  const fetchAs = (agent: AgentPrincipal, requestId: string): typeof fetch =>
    (async (input: string | URL | Request, init?: RequestInit) => {
      const url = urlOf(input);
      const direct = await options.routes.serve({
        method: init?.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        body: typeof init?.body === 'string' ? init.body : undefined,
        headers: plainHeaders(init),
        agent,
        requestId,
        signal: init?.signal ?? undefined,
      });
      return direct ?? inject(requestId, url, init);
    }) as typeof fetch;

  return {
    /** A client acting as `agent` through this process's API until `release` (call it when the outer request ends). */
    clientFor(agent: AgentPrincipal, requestId: string): { client: AgentAuthClient; release(): void } {
      const handle = `${HANDLE_PREFIX}${secret}.${++issued}`;
      callers.set(handle, agent);
      const client = new AgentAuthClient({ apiKey: handle, baseUrl, fetch: fetchAs(agent, requestId), maxRetries: 0 });
      return { client, release: () => callers.delete(handle) };
    },
    /** The agent a handle stands for; undefined for anything that is not a live handle of this process. */
    agentOf(credential: string | undefined): AgentPrincipal | undefined {
      return credential?.startsWith(HANDLE_PREFIX) ? callers.get(credential) : undefined;
    },
  };
}
export type InProcessApi = ReturnType<typeof createInProcessApi>;
