import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Bus } from '@agent-auth/bus';
import type { GatewaySettings } from '@agent-auth/config';
import type { Logger } from '@agent-auth/logging';
import { migrate, packageDir, type Sql } from '@agent-auth/db';
import { createRateLimitStore } from './store/rate-limits.js';
import { installAdmission } from './handlers/rate-limit.js';
import { createAuthenticator } from './adapters/auth.js';
import { frameworkErrorOptions, installErrorHandling } from './handlers/http-errors.js';
import { hookRoutes } from './handlers/hooks.js';
import { actionRoutes } from './handlers/actions.js';
import { identityRoutes } from './handlers/identities.js';
import { memberRoutes } from './handlers/members.js';
import { passkeyRoutes } from './handlers/passkeys.js';
import { policyRoutes } from './handlers/policy.js';
import { vaultRoutes } from './handlers/vault.js';
import { deviceEventRoutes } from './handlers/device-events.js';
import { agentEventRoutes } from './handlers/agent-events.js';
import { eventStreams } from './use-cases/event-streams.js';
import { createWaitRegistry } from './use-cases/held-waits.js';
import { DEVICE_APP_PATH, deviceAppRoutes } from './handlers/device-app.js';
import { openApiCatalog } from './handlers/openapi.js';
import { readinessRoutes } from './handlers/readiness.js';
import { inProcessCallObserver, installRequestObservation, metricsRoutes } from './handlers/observability.js';
import { apiReferenceRoutes } from './handlers/api-reference.js';
import { auditRoutes, jwksRoute } from './handlers/audit.js';
import { createInProcessApi } from './handlers/in-process-api.js';
import { createInProcessRoutes } from './handlers/in-process-routes.js';
import { mcpRoutes } from './handlers/mcp.js';
import { createMcpCalls } from './use-cases/mcp-calls.js';
import { oauthRoutes } from './handlers/oauth.js';
import { oauthConsentRoutes } from './handlers/oauth-consent.js';
import { signInRoutes } from './handlers/sign-in.js';
import { cibaRoutes, cibaTokenGrant } from './handlers/ciba.js';
import { cibaClientRoutes } from './handlers/ciba-clients.js';

export const API_PREFIX = '/api/v1';
export const BODY_LIMIT = 64 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
const API_DESCRIPTION =
  'Agents ask a person for permission before they act; the person approves or denies on a device; rules and ' +
  'spending limits settle routine cases. Agents authenticate with `X-API-Key`, devices with `X-Device-Id`. ' +
  'Every error is JSON `{"detail": "…", "code": "…"}`: `detail` for people, `code` a stable name from the error ' +
  'catalogue. The API guide (docs/api-guide.md in the repository) explains the flows, webhooks and signatures.';

export interface GatewayDeps {
  bus: Bus;
  config: GatewaySettings;
  log: Logger;
  /** The database of the shared rate-limit log; required unless RATE_LIMITS is off. */
  sql?: Sql;
}

/** The shared rate limiter (migrating its schema), or undefined when rate limiting is switched off. */
async function rateLimiter(deps: GatewayDeps) {
  if (!deps.config.RATE_LIMITS) return undefined;
  if (!deps.sql)
    throw new Error(
      'DATABASE_URL must be set: the gateway keeps the rate limits every replica shares in Postgres (or set RATE_LIMITS=false)',
    );
  await migrate(deps.sql, { schema: 'gateway', dir: `${packageDir(import.meta.url)}/store/migrations`, log: deps.log });
  return createRateLimitStore(deps.sql);
}

/** Builds the HTTP gateway (not yet listening): authentication, rate limits, validation and mapping to bus requests. */
export async function createGateway(deps: GatewayDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    ...frameworkErrorOptions,
    // One access line per request comes from installRequestObservation, not fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // Every request's log is the process's logger, its lines carrying `reqId` themselves: a pino child per request
    // redacts its bindings through the wildcard secret paths, 2.2 kB allocated per request whether it logs or not.
    childLoggerFactory: (logger) => logger,
    // Client addresses (the IP rate limit) come from X-Forwarded-For only when the connection is from a listed proxy.
    trustProxy: deps.config.TRUST_PROXY.trim() === '' ? false : deps.config.TRUST_PROXY,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
  });
  installErrorHandling(app, BODY_LIMIT);
  installRequestObservation(app, { logRequests: deps.config.LOG_REQUESTS, metrics: deps.config.METRICS });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  const auth = createAuthenticator(deps.bus, { ttlMs: deps.config.AUTH_CACHE_TTL_MS });
  app.addHook('onClose', async () => auth.close());
  const limiter = await rateLimiter(deps);
  // The MCP tools call this process's own API for the agent their request authenticated, without a socket.
  const inProcessRoutes = createInProcessRoutes(app, {
    bodyLimit: BODY_LIMIT,
    log: app.log,
    observe: inProcessCallObserver(app.log, { logRequests: deps.config.LOG_REQUESTS }),
  });
  const inProcess = createInProcessApi(app, { prefix: API_PREFIX, routes: inProcessRoutes });
  installAdmission(app, { prefix: API_PREFIX, authenticator: auth, limiter, settings: deps.config, inProcess });
  if (limiter) {
    const windowMs = deps.config.RATE_LIMIT_WINDOW_SECONDS * 1000;
    const sweep = setInterval(
      () =>
        void limiter.forgetIdle(windowMs).catch((err: unknown) => deps.log.warn({ err }, 'rate-limit clean-up failed')),
      Math.max(windowMs, 60_000),
    );
    sweep.unref();
    app.addHook('onClose', async () => clearInterval(sweep));
  }

  // Held waits (GET /actions/{id}?wait=S) share one subscription to the resolutions; shutdown answers them at once.
  const waits = createWaitRegistry(deps.bus.actionEvents);
  await waits.start();
  app.addHook('preClose', async () => waits.stop());

  deviceAppRoutes(app);
  const openapi = openApiCatalog(app, {
    prefix: API_PREFIX,
    title: 'Agent action authorization service',
    version: '1',
    description: API_DESCRIPTION,
  });
  // Cheap reads outside the per-IP budget of unauthenticated requests, like the probes and /metrics.
  app.get(`${API_PREFIX}/openapi.json`, { config: { unmetered: true } }, async () => openapi.document());
  app.get('/openapi.json', async () => openapi.document());
  readinessRoutes(app, deps.bus);
  metricsRoutes(app);
  jwksRoute(app, deps.bus);

  await app.register(
    async (api) => {
      const streams = eventStreams(api, deps.config.DEVICE_STREAM_HEARTBEAT_MS);
      identityRoutes(api, deps.bus);
      memberRoutes(api, deps.bus, deps.config.PUBLIC_BASE_URL);
      actionRoutes(api, deps.bus, waits, deps.config);
      hookRoutes(api, deps.bus, waits);
      passkeyRoutes(api, deps.bus, deps.config);
      policyRoutes(api, deps.bus);
      vaultRoutes(api, deps.bus, deps.config);
      deviceEventRoutes(api, deps.bus, streams);
      agentEventRoutes(api, deps.bus, streams, deps.log);
      auditRoutes(api, deps.bus);
      oauthConsentRoutes(api, deps.bus);
      cibaClientRoutes(api, deps.bus);
    },
    { prefix: API_PREFIX },
  );
  const mcpCalls = createMcpCalls(deps.bus);
  app.addHook('onClose', async () => mcpCalls.close());
  await mcpRoutes(app, {
    authenticator: auth,
    limiter,
    settings: deps.config,
    calls: mcpCalls,
    inProcess,
    publicBaseUrl: deps.config.PUBLIC_BASE_URL,
    apiPrefix: API_PREFIX,
    allowedOrigins: deps.config.MCP_ALLOWED_ORIGINS,
  });
  const ciba = {
    bus: deps.bus,
    authenticator: auth,
    publicBaseUrl: deps.config.PUBLIC_BASE_URL,
    limiter,
    settings: deps.config,
  };
  await oauthRoutes(app, {
    bus: deps.bus,
    publicBaseUrl: deps.config.PUBLIC_BASE_URL,
    limiter,
    settings: deps.config,
    cibaGrant: cibaTokenGrant(ciba),
  });
  await cibaRoutes(app, ciba);
  signInRoutes(app, { bus: deps.bus, publicBaseUrl: deps.config.PUBLIC_BASE_URL, limiter, settings: deps.config });
  await apiReferenceRoutes(app, openapi.document);
  return app;
}

/** Builds the gateway and listens on HOST:PORT; resolves to the base URL of the API. */
export async function startGateway(deps: GatewayDeps) {
  const app = await createGateway(deps);
  const address = await app.listen({ host: deps.config.HOST, port: deps.config.PORT });
  const url = new URL(address);
  if (url.hostname === '0.0.0.0' || url.hostname === '[::]') url.hostname = '127.0.0.1';
  const baseUrl = `${url.origin}${API_PREFIX}`;
  deps.log.info({ url: baseUrl, port: url.port, device_app: `${url.origin}${DEVICE_APP_PATH}` }, 'gateway listening');
  return { app, baseUrl, stop: () => app.close() };
}
