import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AgentPrincipal, DevicePrincipal } from '@agent-auth/contracts';
import type { Config } from '@agent-auth/config';
import { errors, isAppError } from '@agent-auth/errors';
import { recordRateLimitRefusal } from '@agent-auth/metrics';
import type { RateLimitOutcome, RateLimitStore } from '../store/rate-limits.js';
import type { AuthKind, Authenticator } from '../adapters/auth.js';
import { admitRole, deviceRouteKey } from './device-roles.js';

/** Whose budget a request spends: its agent, its device, or (unauthenticated or failed authentication) its IP. */
export interface Identity {
  key: string;
  kind: 'agent' | 'device' | 'ip';
  limit: number;
  /** Named in the 429 detail. */
  label: string;
}

/** The rate limits, from configuration (defaults in docs/configuration.md). */
export type RateLimitSettings = Pick<
  Config,
  'RATE_LIMIT_WINDOW_SECONDS' | 'RATE_LIMIT_AGENT' | 'RATE_LIMIT_DEVICE' | 'RATE_LIMIT_IP'
>;

/** The identity a request is counted against. */
export function identityOf(
  settings: RateLimitSettings,
  principal: AgentPrincipal | Pick<DevicePrincipal, 'account_id' | 'device_ref'> | null,
  ip: string,
): Identity {
  if (principal && 'agent_id' in principal)
    return {
      key: `agent:${principal.agent_id}`,
      kind: 'agent',
      limit: settings.RATE_LIMIT_AGENT,
      label: 'this API key',
    };
  if (principal && 'device_ref' in principal)
    return {
      key: `device:${principal.device_ref}`,
      kind: 'device',
      limit: settings.RATE_LIMIT_DEVICE,
      label: 'this device',
    };
  return { key: `ip:${ip}`, kind: 'ip', limit: settings.RATE_LIMIT_IP, label: `unauthenticated requests from ${ip}` };
}

/** The rate-limit headers: whole seconds, rounded up; Retry-After only when refused. */
export function rateLimitHeaders(limit: number, outcome: RateLimitOutcome): Record<string, string> {
  const reset = Math.max(0, Math.ceil(outcome.resetMs / 1000));
  const headers: Record<string, string> = {
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': String(outcome.remaining),
    'x-ratelimit-reset': String(reset),
  };
  if (!outcome.allowed) headers['retry-after'] = String(Math.max(1, reset));
  return headers;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the admission hook once the caller is authenticated. */
    principal: AgentPrincipal | DevicePrincipal | null;
  }
  interface FastifyContextConfig {
    auth?: AuthKind;
    /** A cheap public read under the API prefix (the OpenAPI document): not counted against any budget. */
    unmetered?: boolean;
  }
}

/**
 * An agent API key sent as `Authorization: Bearer aa_…`, as clients configured with a bearer token send it
 * (Claude Code's http hooks, MCP clients); undefined for any other authorization.
 */
export function bearerApiKey(authorization: string | undefined): string | undefined {
  const match = authorization?.match(/^Bearer\s+(aa_\S+)$/i);
  return match?.[1];
}

async function authenticate(auth: AuthKind, authenticator: Authenticator, request: FastifyRequest) {
  const header = (name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  if (auth === 'agent')
    return authenticator.agent(header('x-api-key') ?? bearerApiKey(header('authorization')), request.id);
  if (auth === 'device') return authenticator.device(header('x-device-id'), request.id);
  return null;
}

/** Counts one request against its identity's window; a 429 (with the rate-limit headers) once it is over. */
export async function spendBudget(
  limiter: RateLimitStore,
  settings: RateLimitSettings,
  identity: Identity,
  reply: FastifyReply,
): Promise<void> {
  const outcome = await limiter.hit(identity.key, identity.limit, settings.RATE_LIMIT_WINDOW_SECONDS * 1000);
  const headers = rateLimitHeaders(identity.limit, outcome);
  void reply.headers(headers);
  if (!outcome.allowed) {
    recordRateLimitRefusal(identity.kind);
    throw errors.rateLimited(
      identity.limit,
      settings.RATE_LIMIT_WINDOW_SECONDS,
      identity.label,
      headers['retry-after'] ?? '1',
    );
  }
}

/** Refuses a device's call its member's role may not make (device-roles.ts holds the one table of who may). */
function checkRole(request: FastifyRequest, principal: DevicePrincipal, prefix: string): void {
  const route = request.routeOptions;
  admitRole(principal, {
    key: deviceRouteKey(request.method, route.url ?? '', prefix),
    summary: (route.config as { doc?: { summary?: string } } | undefined)?.doc?.summary,
  });
}

/**
 * Admission of every API request, before its body is read: authenticate (routes declare agent, device or none),
 * then count the request against its identity's sliding window (when a limiter is given), then check a device's
 * role against the route (403 role_forbidden). A missing or invalid
 * credential counts against the IP, then answers 401 (or 429 once the IP is over its limit). Every answer under the
 * API prefix, errors and unknown routes included, carries the rate-limit headers.
 */
export function installAdmission(
  app: FastifyInstance,
  input: {
    prefix: string;
    authenticator: Authenticator;
    limiter?: RateLimitStore;
    settings: RateLimitSettings;
    /** Requests the process makes of itself for an agent whose own request was admitted (the MCP tools). */
    inProcess?: { agentOf(credential: string | undefined): AgentPrincipal | undefined };
  },
): void {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request, reply) => {
    if (!request.url.startsWith(input.prefix)) return; // health probes are not rate limited
    if (request.routeOptions.config?.unmetered) return;
    const auth = request.routeOptions.config?.auth ?? 'none';
    if (auth === 'agent' && input.inProcess) {
      // Its outer request was authenticated and counted already.
      const agent = input.inProcess.agentOf(request.headers['x-api-key'] as string | undefined);
      if (agent) {
        request.principal = agent;
        return;
      }
    }
    let principal: AgentPrincipal | DevicePrincipal | null = null;
    let authError: unknown;
    try {
      principal = await authenticate(auth, input.authenticator, request);
    } catch (err) {
      if (!isAppError(err) || err.status !== 401) throw err; // e.g. the actions service is down: 503, not the caller's fault
      authError = err;
    }
    request.principal = principal;
    if (input.limiter)
      await spendBudget(input.limiter, input.settings, identityOf(input.settings, principal, request.ip), reply);
    if (authError) throw authError;
    if (auth === 'device' && principal) checkRole(request, principal as DevicePrincipal, input.prefix);
  });
}
