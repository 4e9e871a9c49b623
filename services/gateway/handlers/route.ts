import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import { describeZodError, type AgentPrincipal, type DevicePrincipal } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import type { AuthKind, Authenticator } from './auth.js';

type PrincipalOf<A extends AuthKind> = A extends 'agent' ? AgentPrincipal : A extends 'device' ? DevicePrincipal : null;

export interface RouteInput<A extends AuthKind, B, Q, P> {
  principal: PrincipalOf<A>;
  body: B;
  query: Q;
  params: P;
  requestId: string;
}

export interface RouteSpec<A extends AuthKind, B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  auth: A;
  body?: B;
  /** Treat a missing body as {} (for endpoints whose fields are all optional). */
  bodyOptional?: boolean;
  query?: Q;
  params?: P;
  /** The success body, for the API description (GET /openapi.json). */
  response?: z.ZodType;
  handler: (input: RouteInput<A, z.output<B>, z.output<Q>, z.output<P>>) => Promise<unknown>;
}

function parsePart<S extends z.ZodType>(schema: S | undefined, value: unknown, root: string): z.output<S> {
  if (!schema) return undefined as z.output<S>;
  const result = schema.safeParse(value);
  if (!result.success) throw errors.badRequest(describeZodError(result.error, root, value));
  return result.data;
}

/** Declares one HTTP route: validate every part against its contract (the caller is already authenticated), run, answer 200 with JSON. */
export function addRoute<A extends AuthKind, B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType>(
  app: FastifyInstance,
  _authenticator: Authenticator,
  spec: RouteSpec<A, B, Q, P>,
): void {
  app.route({
    method: spec.method,
    url: spec.url,
    // The admission hook (rate-limit.ts) authenticates by this before the body is read.
    config: { auth: spec.auth, doc: { body: spec.body, bodyOptional: spec.bodyOptional, query: spec.query, params: spec.params, response: spec.response } },
    handler: async (request) => {
      const principal = request.principal as PrincipalOf<A>;
      if (spec.auth !== 'none' && !principal) throw errors.unauthorized('Not authenticated');
      const rawBody = request.body === undefined && spec.bodyOptional ? {} : request.body;
      return spec.handler({
        principal,
        body: parsePart(spec.body, rawBody, 'body'),
        query: parsePart(spec.query, request.query, 'query'),
        params: parsePart(spec.params, request.params, 'path'),
        requestId: request.id,
      });
    },
  });
}
