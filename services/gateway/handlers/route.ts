import type { FastifyInstance, FastifyRequest } from 'fastify';
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
  handler: (input: RouteInput<A, z.output<B>, z.output<Q>, z.output<P>>) => Promise<unknown>;
}

function parsePart<S extends z.ZodType>(schema: S | undefined, value: unknown, root: string): z.output<S> {
  if (!schema) return undefined as z.output<S>;
  const result = schema.safeParse(value);
  if (!result.success) throw errors.badRequest(describeZodError(result.error, root, value));
  return result.data;
}

async function principalFor(auth: AuthKind, authenticator: Authenticator, request: FastifyRequest) {
  const header = (name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  if (auth === 'agent') return authenticator.agent(header('x-api-key'), request.id);
  if (auth === 'device') return authenticator.device(header('x-device-id'), request.id);
  return null;
}

/** Declares one HTTP route: authenticate, validate every part against its contract, run, answer 200 with JSON. */
export function addRoute<A extends AuthKind, B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType>(
  app: FastifyInstance,
  authenticator: Authenticator,
  spec: RouteSpec<A, B, Q, P>,
): void {
  app.route({
    method: spec.method,
    url: spec.url,
    handler: async (request) => {
      const principal = (await principalFor(spec.auth, authenticator, request)) as PrincipalOf<A>;
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
