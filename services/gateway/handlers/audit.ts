import type { FastifyInstance } from 'fastify';
import {
  actionsEndpoints as ep,
  AuditQuery,
  auditPageRequestOf,
  type Jwks,
  RequestParams,
} from '@agent-auth/contracts';
import type { Bus } from '@agent-auth/bus';
import { addRoute } from './route.js';

// Keys change only when the actions service restarts with new RECEIPT_KEYS: a minute of caching keeps the JWKS a
// cheap read without a bus request each time, and a new key is published well before it signs anything verified.
const JWKS_TTL_MS = 60_000;

/** The account's audit chain (Device): the whole chain by pages, its signed head, and one request's events. */
export function auditRoutes(app: FastifyInstance, bus: Bus): void {
  addRoute(app, {
    method: 'GET',
    url: '/audit',
    tag: 'Audit',
    summary: "Read the account's audit chain",
    description:
      'Every audit event of the account in `seq` order, `limit` (1-500, default 100) after `after`: each with ' +
      "`prev_hash` (the previous event's hash, 64 zeros before seq 1) and `hash` (SHA-256 of the RFC 8785 " +
      'canonical JSON of the event without `hash`). `next_after` is the last seq returned, null once nothing is left. ' +
      'Where retention cut the chain it starts after the checkpoint, and the page that starts there carries ' +
      '`checkpoint`: the last dropped event, signed like the head (typ `aa-audit-checkpoint+jws`).',
    auth: 'device',
    query: AuditQuery,
    response: ep.auditPage.response,
    handler: ({ principal, query, requestId }) =>
      bus.requestEncoded(ep.auditPage, auditPageRequestOf(principal, query), { requestId }),
  });
  addRoute(app, {
    method: 'GET',
    url: '/audit/head',
    tag: 'Audit',
    summary: "The audit chain's signed head",
    description:
      'The last event of the chain, `{seq, hash, at}`, and `signature`: a compact JWS (ES256, typ ' +
      '`aa-audit-head+jws`) by a receipt key over `{account_id, seq, hash, at}`. Keep it to prove the chain later.',
    auth: 'device',
    response: ep.auditHead.response,
    handler: ({ principal, requestId }) => bus.request(ep.auditHead, { device: principal }, { requestId }),
  });
  addRoute(app, {
    method: 'GET',
    url: '/actions/:request_id/audit',
    tag: 'Audit',
    summary: "A request's audit trail",
    description: "The audit chain's events of one request of the account, in `seq` order (404 for any other id).",
    auth: 'device',
    params: RequestParams,
    response: ep.auditTrail.response,
    handler: ({ principal, params, requestId }) =>
      bus.request(ep.auditTrail, { device: principal, id: params.request_id }, { requestId }),
  });
}

/** GET /.well-known/jwks.json at the host root: every receipt public key, current and retired (no auth). */
export function jwksRoute(app: FastifyInstance, bus: Bus): void {
  let cached: { keys: Promise<Jwks>; until: number } | undefined;
  app.get('/.well-known/jwks.json', async (request, reply) => {
    if (!cached || cached.until < Date.now()) {
      const keys = bus.request(ep.jwks, {}, { requestId: request.id });
      cached = { keys, until: Date.now() + JWKS_TTL_MS };
      keys.catch(() => (cached = undefined)); // a failed fetch is not kept
    }
    const jwks = await cached.keys;
    return reply
      .header('cache-control', 'public, max-age=60')
      .header('content-type', 'application/jwk-set+json')
      .send(jwks);
  });
}
