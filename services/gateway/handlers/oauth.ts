import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Bus } from '@agent-auth/bus';
import {
  AuthorizeQuery,
  CIBA_GRANT_TYPE,
  type ClientCredentials,
  clientRegistrationOf,
  describeZodError,
  identityEndpoints as ep,
  RegistrationBody,
  RevocationForm,
  TokenForm,
} from '@agent-auth/contracts';
import { AppError, errors, isAppError } from '@agent-auth/errors';
import type { z } from 'zod';
import type { RateLimitStore } from '../store/rate-limits.js';
import { DEVICE_APP_PATH } from './device-app.js';
import { authorizationServerMetadata, protectedResourceMetadata } from './oauth-metadata.js';
import { noteRefusal } from './observability.js';
import { mcpResourceOf, publicOriginOf } from './public-origin.js';
import { identityOf, type RateLimitSettings, spendBudget } from './rate-limit.js';

export interface OAuthRouteDeps {
  bus: Bus;
  publicBaseUrl: string | undefined;
  limiter?: RateLimitStore;
  settings: RateLimitSettings;
  /** The CIBA grant (handlers/ciba.ts): its client is an agent, authenticated and counted as the agent. */
  cibaGrant?: CibaGrant;
}

/** Answers a token request with the CIBA grant type. */
export type CibaGrant = (
  request: FastifyRequest,
  reply: FastifyReply,
  input: { form: TokenForm; client: ClientCredentials },
) => Promise<unknown>;

/** A form or registration is a few hundred bytes. */
const OAUTH_BODY_LIMIT = 16 * 1024;

/** The error codes of the OAuth RFCs (6749, 7591, 8707): such an error answers with its own code. */
const OAUTH_CODES = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'unsupported_response_type',
  'invalid_scope',
  'invalid_target',
  'invalid_redirect_uri',
  'invalid_client_metadata',
  // OpenID Connect CIBA (with RFC 9396's rich authorization requests).
  'authorization_pending',
  'slow_down',
  'access_denied',
  'expired_token',
  'invalid_authorization_details',
]);

const CORS = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'authorization, content-type' };
export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

/**
 * Any refusal as an OAuth error (RFC 6749 5.2): the RFCs' own codes as they are, the request's other faults as
 * invalid_request (400), a rate limit as 429, a part of the service away as temporarily_unavailable (503).
 */
export function oauthErrorOf(err: unknown): { status: number; error: string; error_description: string } {
  const app: AppError | undefined = isAppError(err) ? err : undefined;
  const detail = app?.detail ?? 'The request is not valid';
  if (app && OAUTH_CODES.has(app.code)) return { status: app.status, error: app.code, error_description: detail };
  if (app?.status === 429) return { status: 429, error: 'too_many_requests', error_description: detail };
  const status = app?.status ?? (err as { statusCode?: number }).statusCode ?? 500;
  if (status >= 500)
    return status === 503 || status === 504
      ? { status: 503, error: 'temporarily_unavailable', error_description: detail }
      : { status: 500, error: 'server_error', error_description: 'Internal error' };
  return { status: 400, error: 'invalid_request', error_description: detail };
}

/** A form (application/x-www-form-urlencoded) as an object; a parameter given twice is refused (RFC 6749 3.1). */
export function parseForm(text: string): Record<string, string> {
  const params = new URLSearchParams(text);
  const form: Record<string, string> = {};
  for (const [name, value] of params) {
    if (name in form) throw errors.invalidRequest(`${name}: is given more than once`);
    form[name] = value;
  }
  return form;
}

export function parseWith<S extends z.ZodType>(
  schema: S,
  value: unknown,
  root: string,
  onError = errors.invalidRequest,
) {
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) throw onError(describeZodError(parsed.error, root, value));
  return parsed.data as z.output<S>;
}

/**
 * The client's credentials: HTTP Basic (client_secret_basic, RFC 6749 2.3.1: both parts form-encoded) or
 * client_id and client_secret in the form (client_secret_post, or a public client's client_id alone).
 */
export function clientCredentialsOf(request: FastifyRequest, form: { client_id?: string; client_secret?: string }) {
  const basic = /^Basic\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  if (basic !== undefined) {
    if (form.client_secret !== undefined)
      throw errors.invalidRequest(
        'client_secret: send the client credentials one way, not in both the header and the form',
      );
    const decoded = Buffer.from(basic, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw errors.oauthInvalidClient('The Basic credentials are not client_id:client_secret');
    const id = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
    const secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
    return { client_id: id, client_secret: secret } satisfies ClientCredentials;
  }
  if (!form.client_id) throw errors.oauthInvalidClient('client_id: is required (or HTTP Basic client credentials)');
  return { client_id: form.client_id, client_secret: form.client_secret ?? null } satisfies ClientCredentials;
}

const required = (value: string | undefined, name: string): string => {
  if (!value) throw errors.invalidRequest(`${name}: is required`);
  return value;
};

/**
 * Form bodies in (a parameter given twice refused) and every refusal out as an OAuth error `{error,
 * error_description}` with `headers`, a Basic challenge on a 401 to Basic credentials: the OAuth and CIBA rooms alike.
 */
export function answerAsOAuth(
  room: FastifyInstance,
  options: { bodyLimit: number; headers: Record<string, string> },
): void {
  room.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: options.bodyLimit },
    (_request, body, done) => {
      try {
        done(null, parseForm(body as string));
      } catch (err) {
        done(err as Error, undefined);
      }
    },
  );
  room.setErrorHandler((err, request, reply) => {
    const { status, ...body } = oauthErrorOf(err);
    if (status >= 500) request.log.error({ reqId: request.id, err }, 'request failed');
    else noteRefusal(request, body.error_description);
    if (status === 401 && request.headers.authorization?.match(/^Basic\s/i))
      void reply.header('www-authenticate', 'Basic realm="oauth"');
    return reply.code(status).headers(options.headers).send(body);
  });
}

/**
 * The OAuth 2.1 authorization server of /mcp and its metadata: `/.well-known/oauth-protected-resource[/mcp]`,
 * `/.well-known/oauth-authorization-server`, `/oauth/register`, `/oauth/authorize` (to the device app's consent
 * page), `/oauth/token` and `/oauth/revoke`. Errors answer `{"error", "error_description"}` as the RFCs say.
 */
export async function oauthRoutes(app: FastifyInstance, deps: OAuthRouteDeps): Promise<void> {
  const origin = (request: FastifyRequest) => publicOriginOf(request, deps.publicBaseUrl);
  const spend = async (request: FastifyRequest, reply: FastifyReply, clientId?: string) => {
    if (!deps.limiter) return;
    const identity =
      clientId === undefined
        ? identityOf(deps.settings, null, request.ip)
        : {
            key: `oauth-client:${clientId}`,
            kind: 'agent' as const,
            limit: deps.settings.RATE_LIMIT_AGENT,
            label: 'this OAuth client',
          };
    await spendBudget(deps.limiter, deps.settings, identity, reply);
  };

  await app.register(async (oauth) => {
    answerAsOAuth(oauth, { bodyLimit: OAUTH_BODY_LIMIT, headers: { ...NO_STORE, ...CORS } });
    // Browser-based clients read the metadata and call the token endpoint across origins.
    oauth.addHook('onSend', async (request, reply) => {
      if (!request.url.startsWith('/oauth/authorize')) void reply.headers(CORS);
    });

    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource'])
      oauth.get(path, async (request) => protectedResourceMetadata(origin(request)));
    oauth.get('/.well-known/oauth-authorization-server', async (request) =>
      authorizationServerMetadata(origin(request)),
    );

    oauth.post('/oauth/register', { bodyLimit: OAUTH_BODY_LIMIT }, async (request, reply) => {
      await spend(request, reply);
      const body = parseWith(RegistrationBody, request.body, 'body', errors.oauthInvalidClientMetadata);
      const registered = await deps.bus.request(ep.registerClient, clientRegistrationOf(body), {
        requestId: request.id,
      });
      // RFC 7591 3.2.1: a field the client did not give is absent, not null.
      const answer = Object.fromEntries(Object.entries(registered).filter(([, value]) => value !== null));
      return reply.code(201).headers(NO_STORE).send(answer);
    });

    oauth.get('/oauth/authorize', async (request, reply) => {
      await spend(request, reply);
      try {
        const query = parseWith(AuthorizeQuery, request.query, 'query');
        const started = await deps.bus.request(
          ep.startAuthorization,
          {
            client_id: query.client_id ?? null,
            redirect_uri: query.redirect_uri ?? null,
            response_type: query.response_type ?? null,
            code_challenge: query.code_challenge ?? null,
            code_challenge_method: query.code_challenge_method ?? null,
            state: query.state ?? null,
            scope: query.scope ?? null,
            resource: query.resource ?? null,
            issuer: origin(request),
            resource_served: mcpResourceOf(origin(request)),
          },
          { requestId: request.id },
        );
        const location =
          started.outcome === 'consent'
            ? `${origin(request)}${DEVICE_APP_PATH}#/connect?request=${encodeURIComponent(started.request_id)}`
            : started.redirect_to;
        return reply.code(302).headers({ location, 'cache-control': 'no-store' }).send();
      } catch (err) {
        // A client or redirect URI that cannot be trusted is answered here (400), never redirected to (4.1.2.1).
        if (isAppError(err) && err.code === errors.oauthInvalidClient.code)
          throw new AppError(400, err.code, err.detail);
        throw err;
      }
    });

    oauth.post('/oauth/token', { bodyLimit: OAUTH_BODY_LIMIT }, async (request, reply) => {
      const form = parseWith(TokenForm, request.body, 'form');
      const client = clientCredentialsOf(request, form);
      if (form.grant_type === CIBA_GRANT_TYPE && deps.cibaGrant)
        return deps.cibaGrant(request, reply, { form, client });
      await spend(request, reply, client.client_id);
      const requestId = request.id;
      const grantType = required(form.grant_type, 'grant_type');
      let tokens: z.output<typeof ep.exchangeCode.response>;
      if (grantType === 'authorization_code') {
        tokens = await deps.bus.request(
          ep.exchangeCode,
          {
            client,
            code: required(form.code, 'code'),
            code_verifier: required(form.code_verifier, 'code_verifier'),
            redirect_uri: form.redirect_uri ?? null,
            resource: form.resource ?? null,
          },
          { requestId },
        );
      } else if (grantType === 'refresh_token') {
        tokens = await deps.bus.request(
          ep.refreshTokens,
          { client, refresh_token: required(form.refresh_token, 'refresh_token'), resource: form.resource ?? null },
          { requestId },
        );
      } else throw errors.oauthUnsupportedGrantType(grantType.slice(0, 100));
      return reply.headers(NO_STORE).send(tokens);
    });

    oauth.post('/oauth/revoke', { bodyLimit: OAUTH_BODY_LIMIT }, async (request, reply) => {
      await spend(request, reply);
      const form = parseWith(RevocationForm, request.body, 'form');
      const client = clientCredentialsOf(request, form);
      await deps.bus.request(
        ep.revokeToken,
        { client, token: required(form.token, 'token'), token_type_hint: form.token_type_hint ?? null },
        { requestId: request.id },
      );
      // RFC 7009 2.2: the same answer whether or not the token was known.
      return reply.code(200).headers(NO_STORE).send();
    });

    for (const path of ['/oauth/register', '/oauth/token', '/oauth/revoke'])
      oauth.options(path, async (_request, reply) =>
        reply
          .code(204)
          .headers({ ...CORS, 'access-control-allow-methods': 'POST, OPTIONS', allow: 'POST, OPTIONS' })
          .send(),
      );
  });
}
