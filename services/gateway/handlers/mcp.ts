import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AgentPrincipal } from '@agent-auth/contracts';
import { errors, isAppError } from '@agent-auth/errors';
import {
  answerParseError,
  cancelledIdsOf,
  createSharedToolServer,
  type SharedToolServer,
  isInitialization,
  jsonRpcErrorBody,
  requestIdsOf,
  serveMcpExchange,
} from '@agent-auth/mcp-server';
import type { Authenticator } from '../adapters/auth.js';
import type { InProcessApi } from './in-process-api.js';
import type { RateLimitStore } from '../store/rate-limits.js';
import type { McpCalls } from '../use-cases/mcp-calls.js';
import { mcpResourceOf, publicHostOf, publicOriginOf, resourceMetadataUrlOf } from './public-origin.js';
import { identityOf, type RateLimitSettings, spendBudget } from './rate-limit.js';

/** A tool call carries at most a vault call's body and an action's metadata: as large as a hook's tool input. */
export const MCP_BODY_LIMIT = 256 * 1024;

export interface McpRouteDeps {
  authenticator: Authenticator;
  limiter?: RateLimitStore;
  settings: RateLimitSettings;
  calls: McpCalls;
  inProcess: InProcessApi;
  publicBaseUrl: string | undefined;
  /** The API's path prefix (/api/v1), for the approval links the tools give. */
  apiPrefix: string;
  /** Browser origins besides the service's own that may call /mcp; `*` for any (MCP_ALLOWED_ORIGINS). */
  allowedOrigins: readonly string[];
}

const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers':
    'authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id',
  'access-control-expose-headers': 'www-authenticate, mcp-session-id, mcp-protocol-version, x-request-id',
};

const CORS_ENTRIES = Object.entries(CORS_HEADERS);

/** An Mcp-Session-Id the client echoes back: visible ASCII (as the transport's specification says), bounded. */
const SESSION_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * The client's session: an id handed out at `initialize` that names nothing kept anywhere (any replica takes any
 * id, none is ever ended), so that cancellations name the call of that session; '' for a client without one.
 */
function sessionOf(request: FastifyRequest): string {
  const given = request.headers['mcp-session-id'];
  return typeof given === 'string' && SESSION_ID.test(given) ? given : '';
}

/**
 * A Host that names an address rather than a domain: an IPv4 or bracketed IPv6 literal, or localhost, with an
 * optional port. A rebinding page reaches the service through a domain its attacker controls, never through one of
 * these, so a replica addressed directly (by a health check, a load balancer or an operator) is let through.
 */
const ADDRESS_HOST = /^(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:.]+\]|localhost)(?::\d{1,5})?$/;

/** DNS rebinding protection: the Host the service answers to (when PUBLIC_BASE_URL names it) and the origins. */
function rebindingGuard(deps: McpRouteDeps, request: FastifyRequest, origin: string) {
  const host = request.headers.host;
  const direct = host !== undefined && ADDRESS_HOST.test(host) ? [host] : [];
  return {
    allowedHosts: deps.publicBaseUrl ? [publicHostOf(deps.publicBaseUrl), ...direct] : undefined,
    allowedOrigins: deps.allowedOrigins.includes('*') ? undefined : [origin, ...deps.allowedOrigins],
  };
}

const BEARER = /^Bearer\s+(\S+)$/i;

/**
 * The agent a request to /mcp acts as: an agent API key (as the bearer token, or X-API-Key), or an OAuth access
 * token, which must have been issued for this resource (its audience): `<origin>/mcp`.
 */
async function agentOf(deps: McpRouteDeps, request: FastifyRequest): Promise<AgentPrincipal> {
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string') return deps.authenticator.agent(apiKey, request.id);
  const bearer = BEARER.exec(request.headers.authorization ?? '')?.[1];
  if (bearer === undefined) throw errors.bearerTokenMissing();
  if (bearer.startsWith('aa_')) return deps.authenticator.agent(bearer, request.id);
  const token = await deps.authenticator.accessToken(bearer, request.id);
  const served = mcpResourceOf(publicOriginOf(request, deps.publicBaseUrl));
  if (token.resource !== served) throw errors.accessTokenWrongResource(served);
  return { account_id: token.account_id, agent_id: token.agent_id };
}

/** `WWW-Authenticate` of a 401: where the resource's metadata is, and why the token was refused when one was sent. */
function challengeOf(request: FastifyRequest, origin: string, detail: string): string {
  const sent = request.headers.authorization !== undefined || request.headers['x-api-key'] !== undefined;
  const error = sent ? `, error="invalid_token", error_description="${detail.replace(/["\\]/g, '')}"` : '';
  return `Bearer resource_metadata="${resourceMetadataUrlOf(origin)}"${error}`;
}

/** Authenticates and counts the request; a refused credential answers 401 with the challenge. */
async function admit(deps: McpRouteDeps, request: FastifyRequest, reply: FastifyReply): Promise<AgentPrincipal> {
  let agent: AgentPrincipal | null = null;
  let refusal: unknown;
  try {
    agent = await agentOf(deps, request);
  } catch (err) {
    if (!isAppError(err) || err.status !== 401) throw err;
    refusal = err;
    void reply.header(
      'www-authenticate',
      challengeOf(request, publicOriginOf(request, deps.publicBaseUrl), err.detail),
    );
  }
  if (deps.limiter) await spendBudget(deps.limiter, deps.settings, identityOf(deps.settings, agent, request.ip), reply);
  if (refusal) throw refusal;
  return agent!;
}

/** The body as JSON, or `undefined` when it is not JSON. */
function parseBody(text: unknown): { ok: true; value: unknown } | { ok: false } {
  if (typeof text !== 'string') return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** One POST of JSON-RPC messages: cancellations passed on, the calls served by the tools as the caller's agent. */
async function servePost(
  deps: McpRouteDeps,
  shared: SharedToolServer,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const agent = await admit(deps, request, reply);
  // The transport writes the answer itself: the headers set so far (the rate limit's) go on the raw response.
  const raw = reply.raw;
  if (deps.limiter) for (const [name, value] of Object.entries(reply.getHeaders())) raw.setHeader(name, value!);
  for (const [name, value] of CORS_ENTRIES) raw.setHeader(name, value);
  raw.setHeader('x-request-id', request.id);
  reply.hijack();
  const body = parseBody(request.body);
  if (!body.ok) return answerParseError(raw);
  const session = isInitialization(body.value) ? `mcps_${randomUUID()}` : sessionOf(request);
  if (session) raw.setHeader('mcp-session-id', session);
  const caller = { agent_id: agent.agent_id, session_id: session };
  deps.calls.cancel(caller, cancelledIdsOf(body.value));
  const tracked = deps.calls.track(caller, requestIdsOf(body.value));
  const { client, release } = deps.inProcess.clientFor(agent, request.id);
  const origin = publicOriginOf(request, deps.publicBaseUrl);
  try {
    await serveMcpExchange({
      request: request.raw,
      response: raw,
      body: body.value,
      client,
      baseUrl: `${origin}${deps.apiPrefix}`,
      cancellation: tracked,
      shared,
      ...rebindingGuard(deps, request, origin),
    });
  } finally {
    tracked.done();
    release();
  }
}

/**
 * `/mcp` at the host root: the MCP tools over Streamable HTTP (POST), stateless, so no GET stream and no session to
 * delete (405, as the transport's specification allows). Its body is read as text and parsed here, so a body that
 * is not JSON gets the JSON-RPC parse error rather than the API's error shape.
 */
export async function mcpRoutes(app: FastifyInstance, deps: McpRouteDeps): Promise<void> {
  const shared = await createSharedToolServer();
  app.addHook('onClose', () => shared.close());
  await app.register(async (mcp) => {
    mcp.removeAllContentTypeParsers();
    const asText = { parseAs: 'string' as const, bodyLimit: MCP_BODY_LIMIT };
    const keepText = (_request: FastifyRequest, body: string | Buffer, done: (err: null, body: unknown) => void) =>
      done(null, body);
    // JSON by name as well as the catch-all: a named type is found in fastify's cache, the catch-all looked up anew.
    mcp.addContentTypeParser('application/json', asText, keepText);
    mcp.addContentTypeParser('*', asText, keepText);
    mcp.post('/mcp', { bodyLimit: MCP_BODY_LIMIT }, (request, reply) => servePost(deps, shared, request, reply));
    mcp.route({
      method: ['GET', 'DELETE'],
      url: '/mcp',
      handler: async (request, reply) => {
        await admit(deps, request, reply);
        return reply
          .code(405)
          .headers({ allow: 'POST', 'content-type': 'application/json', ...CORS_HEADERS })
          .send(jsonRpcErrorBody(-32000, 'Method not allowed: this server is stateless; send requests with POST.'));
      },
    });
    mcp.options('/mcp', async (_request, reply) =>
      reply
        .code(204)
        .headers({
          ...CORS_HEADERS,
          'access-control-allow-methods': 'POST, GET, DELETE, OPTIONS',
          allow: 'POST, OPTIONS',
        })
        .send(),
    );
  });
}
