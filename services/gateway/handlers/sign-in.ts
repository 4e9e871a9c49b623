import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Bus } from '@agent-auth/bus';
import { OidcRedeemBody, OidcStartQuery, oidcEndpoints as ep } from '@agent-auth/contracts';
import { isAppError } from '@agent-auth/errors';
import type { RateLimitStore } from '../store/rate-limits.js';
import { DEVICE_APP_PATH } from './device-app.js';
import { noteRefusal } from './observability.js';
import { parseWith } from './oauth.js';
import { publicOriginOf } from './public-origin.js';
import { identityOf, type RateLimitSettings, spendBudget } from './rate-limit.js';

export interface SignInRouteDeps {
  bus: Bus;
  publicBaseUrl: string | undefined;
  limiter?: RateLimitStore;
  settings: RateLimitSettings;
}

const BASE = '/auth/oidc';
/** The cookie that binds a sign-in to the browser that started it (login CSRF): only the sign-in's paths see it. */
const BINDING_COOKIE = 'aa_sign_in';
const SIGN_IN_SECONDS = 600;
// The browser leaves for the provider and comes back: nothing of either URL is sent on as a referrer, nor kept.
const REDIRECT_HEADERS = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' };

function cookieOf(request: FastifyRequest, name: string): string | null {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

function bindingCookie(request: FastifyRequest, value: string, maxAge: number): string {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  return `${BINDING_COOKIE}=${value}; Path=${BASE}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`;
}

/**
 * Sign-in with the company's OpenID provider (the identity service does it; this is its HTTP edge, unauthenticated
 * and counted against the per-IP budget): `GET /auth/oidc` says whether it is offered, `/auth/oidc/start` sends the
 * browser to the provider, `/auth/oidc/callback` takes it back to the device app with a one-time ticket in the URL
 * fragment (never sent to a server), and `POST /auth/oidc/redeem` exchanges that ticket for the new device's id.
 */
export function signInRoutes(app: FastifyInstance, deps: SignInRouteDeps): void {
  const origin = (request: FastifyRequest) => publicOriginOf(request, deps.publicBaseUrl);
  const spend = async (request: FastifyRequest, reply: FastifyReply) => {
    if (deps.limiter)
      await spendBudget(deps.limiter, deps.settings, identityOf(deps.settings, null, request.ip), reply);
  };
  const toApp = (request: FastifyRequest, reply: FastifyReply, fragment: Record<string, string>) =>
    reply
      .code(303)
      .headers({
        ...REDIRECT_HEADERS,
        location: `${origin(request)}${DEVICE_APP_PATH}#/signin?${new URLSearchParams(fragment)}`,
      })
      .send();
  // A browser navigation is answered with the app showing the refusal, not a JSON page.
  const refusedInApp = (request: FastifyRequest, reply: FastifyReply, err: unknown) => {
    if (!isAppError(err) || err.status >= 500) request.log.error({ reqId: request.id, err }, 'sign-in failed');
    else noteRefusal(request, err.detail);
    return toApp(request, reply, { error: isAppError(err) ? err.detail : 'The sign-in failed: try again' });
  };

  app.get(BASE, async (request, reply) => {
    await spend(request, reply);
    return reply
      .headers({ 'cache-control': 'no-store' })
      .send(await deps.bus.request(ep.config, {}, { requestId: request.id }));
  });

  app.get(`${BASE}/start`, async (request, reply) => {
    await spend(request, reply);
    try {
      const query = parseWith(OidcStartQuery, request.query, 'query');
      const binding = `asb_${randomBytes(32).toString('base64url')}`;
      const started = await deps.bus.request(
        ep.start,
        {
          redirect_uri: `${origin(request)}${BASE}/callback`,
          device_name: query.device_name ?? null,
          browser_binding: binding,
        },
        { requestId: request.id },
      );
      return reply
        .code(302)
        .headers({
          ...REDIRECT_HEADERS,
          location: started.authorization_url,
          'set-cookie': bindingCookie(request, binding, SIGN_IN_SECONDS),
        })
        .send();
    } catch (err) {
      return refusedInApp(request, reply, err);
    }
  });

  app.get(`${BASE}/callback`, async (request, reply) => {
    await spend(request, reply);
    void reply.header('set-cookie', bindingCookie(request, '', 0));
    try {
      const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
      const finished = await deps.bus.request(
        ep.finish,
        { callback_query: query, browser_binding: cookieOf(request, BINDING_COOKIE) },
        { requestId: request.id },
      );
      return toApp(request, reply, { ticket: finished.ticket });
    } catch (err) {
      return refusedInApp(request, reply, err);
    }
  });

  app.post(`${BASE}/redeem`, async (request, reply) => {
    await spend(request, reply);
    const body = parseWith(OidcRedeemBody, request.body, 'body');
    const joined = await deps.bus.request(ep.redeem, { ticket: body.ticket }, { requestId: request.id });
    return reply.headers({ 'cache-control': 'no-store' }).send(joined);
  });
}
