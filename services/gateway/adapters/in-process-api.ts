import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { AgentAuthClient } from '@agent-auth/client';
import type { AgentPrincipal } from '@agent-auth/contracts';

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
  const headers = new Headers(init?.headers);
  headers.delete('idempotency-key');
  return Object.fromEntries(headers.entries());
}

/**
 * The gateway's own API called from inside the process, for the MCP tools: an AgentAuthClient whose `fetch` hands
 * each request to the app (fastify's inject, no socket), authenticated by a handle that stands for the agent the
 * outer request already authenticated. A handle lives in this process's memory only, for the outer request's life.
 */
export function createInProcessApi(app: FastifyInstance, options: { prefix: string }) {
  const baseUrl = `${IN_PROCESS_ORIGIN}${options.prefix}`;
  const callers = new Map<string, AgentPrincipal>();

  const inject = (requestId: string): typeof fetch =>
    (async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
      const options: InjectOptions = {
        method: (init?.method ?? 'GET') as InjectOptions['method'],
        url: url.pathname + url.search,
        headers: { ...plainHeaders(init), 'x-request-id': requestId },
        ...(typeof init?.body === 'string' ? { payload: init.body } : {}),
        ...(init?.signal ? { signal: init.signal } : {}),
      };
      const res = await app.inject(options);
      const body = NULL_BODY_STATUSES.has(res.statusCode) ? null : res.rawPayload;
      return new Response(body, { status: res.statusCode, headers: fetchHeaders(res.headers) });
    }) as typeof fetch;

  return {
    /** A client acting as `agent` through this process's API until `release` (call it when the outer request ends). */
    clientFor(agent: AgentPrincipal, requestId: string): { client: AgentAuthClient; release(): void } {
      const handle = `${HANDLE_PREFIX}${randomBytes(24).toString('base64url')}`;
      callers.set(handle, agent);
      const client = new AgentAuthClient({ apiKey: handle, baseUrl, fetch: inject(requestId), maxRetries: 0 });
      return { client, release: () => callers.delete(handle) };
    },
    /** The agent a handle stands for; undefined for anything that is not a live handle of this process. */
    agentOf(credential: string | undefined): AgentPrincipal | undefined {
      return credential?.startsWith(HANDLE_PREFIX) ? callers.get(credential) : undefined;
    },
  };
}
export type InProcessApi = ReturnType<typeof createInProcessApi>;
