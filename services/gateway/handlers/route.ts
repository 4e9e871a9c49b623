import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import type { z } from 'zod';
import { describeZodError, type AgentPrincipal, type DevicePrincipal } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { EncodedJson } from '@agent-auth/bus';
import type { AuthKind } from '../adapters/auth.js';
import type { ApiTag, HeaderDoc } from './openapi.js';

type PrincipalOf<A extends AuthKind> = A extends 'agent' ? AgentPrincipal : A extends 'device' ? DevicePrincipal : null;

export interface RouteInput<A extends AuthKind, B, Q, P> {
  principal: PrincipalOf<A>;
  body: B;
  query: Q;
  params: P;
  requestId: string;
  /** Registers a listener called if the client goes away before the answer. */
  onClientGone: (listener: () => void) => void;
  /** The HTTP request itself, for what only the transport knows (the host and scheme it came in on). */
  request: FastifyRequest;
  headers: IncomingHttpHeaders;
  /** For a route that sets its own status or headers. */
  reply: FastifyReply;
}

export interface RouteSpec<A extends AuthKind, B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  auth: A;
  body?: B;
  /** Treat a missing body as {} (for endpoints whose fields are all optional). */
  bodyOptional?: boolean;
  /** A larger body limit than the server's for this route, in bytes (a hook's tool input). */
  bodyLimit?: number;
  query?: Q;
  params?: P;
  /** For the API description: request headers the route reads besides the credentials (read from `headers`). */
  headerDocs?: Record<string, HeaderDoc>;
  /** For the API description: headers the route may set on its success answer. */
  responseHeaders?: Record<string, HeaderDoc>;
  /** The success body, for the API description (GET /api/v1/openapi.json). */
  response?: z.ZodType;
  /** For the API reference: one line, what it does (Markdown), and its group. */
  summary: string;
  description: string;
  tag: ApiTag;
  handler: (input: RouteInput<A, z.output<B>, z.output<Q>, z.output<P>>) => Promise<unknown>;
}

function parsePart<S extends z.ZodType>(schema: S | undefined, value: unknown, root: string): z.output<S> {
  if (!schema) return undefined as z.output<S>;
  const result = schema.safeParse(value);
  if (!result.success) throw errors.invalidRequest(describeZodError(result.error, root, value));
  return result.data;
}

/** The success body as its contract describes it (unknown fields dropped); a reply that breaks it is a 500. */
function shapeReply(route: string, schema: z.ZodType, value: unknown): unknown {
  const result = schema.safeParse(value);
  if (!result.success) throw errors.replyBrokeContract(route, describeZodError(result.error, 'reply'));
  return result.data;
}

const JSON_TYPE = 'application/json; charset=utf-8';

// No id the service issues contains a control character: such an id is simply not found.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point of this pattern
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The path parameters, or a 404 when one of them could not be an id of ours. */
function knownIds(params: unknown): unknown {
  for (const [name, value] of Object.entries((params ?? {}) as Record<string, unknown>)) {
    if (typeof value === 'string' && CONTROL.test(value)) throw errors.idNotFound(name.replace(/_id$/, ''));
  }
  return params;
}

/** Declares one HTTP route: validate every part against its contract (the caller is already authenticated), run, answer 200 with JSON. */
export function addRoute<A extends AuthKind, B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType>(
  app: FastifyInstance,
  spec: RouteSpec<A, B, Q, P>,
): void {
  app.route({
    method: spec.method,
    url: spec.url,
    ...(spec.bodyLimit ? { bodyLimit: spec.bodyLimit } : {}),
    // The admission hook (rate-limit.ts) authenticates by this before the body is read.
    config: {
      auth: spec.auth,
      doc: {
        summary: spec.summary,
        description: spec.description,
        tag: spec.tag,
        body: spec.body,
        bodyOptional: spec.bodyOptional,
        query: spec.query,
        params: spec.params,
        headers: spec.headerDocs,
        response: spec.response,
        responseHeaders: spec.responseHeaders,
      },
    },
    handler: async (request, reply) => {
      const principal = request.principal as PrincipalOf<A>;
      if (spec.auth !== 'none' && !principal) throw errors.notAuthenticated();
      const rawBody = request.body === undefined && spec.bodyOptional ? {} : request.body;
      const result = await spec.handler({
        principal,
        body: parsePart(spec.body, rawBody, 'body'),
        query: parsePart(spec.query, request.query, 'query'),
        params: parsePart(spec.params, knownIds(request.params), 'path'),
        requestId: request.id,
        onClientGone: (listener) => {
          reply.raw.once('close', () => {
            if (!reply.raw.writableFinished) listener();
          });
        },
        request,
        headers: request.headers,
        reply,
      });
      // A route that answered by itself (a status without a body) has nothing more to shape.
      if (reply.sent) return reply;
      // A large list passed on unread was built field by field from its contract's types by the service that sent it
      // (a test checks its shape on every such route).
      if (result instanceof EncodedJson) return reply.type(JSON_TYPE).send(result.bytes);
      // Services' replies are trusted on the bus; what leaves the system is shaped by the contract once, here.
      return spec.response ? shapeReply(`${spec.method} ${spec.url}`, spec.response, result) : result;
    },
  });
}
