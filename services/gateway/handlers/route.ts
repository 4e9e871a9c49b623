import type { FastifyInstance, FastifyRequest } from 'fastify';
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
  /** The HTTP method the route was called with (a HEAD is served by the GET's handler). */
  method: string;
  /** Sets a header on the success answer. */
  setHeader: (name: string, value: string) => void;
  /**
   * The HTTP request itself, for what only the transport knows (the host and scheme it came in on: a passkey's
   * relying party). Agent routes do not get it: the MCP tools call them in process, with no HTTP request at all.
   */
  request: A extends 'agent' ? undefined : FastifyRequest;
  headers: IncomingHttpHeaders;
}

/** What a handler returns to answer 204 without a body (a hook that does not object, for Codex). */
export const NO_CONTENT = Symbol('no content');

/** A route's parts as they arrived, before validation: what either caller (HTTP or in process) hands to `runRoute`. */
export type RouteCall<A extends AuthKind> = Omit<RouteInput<A, unknown, unknown, unknown>, 'principal'> & {
  principal: PrincipalOf<A> | null;
};

/** A route that may be called in process for an already authenticated agent (the MCP tools), past fastify. */
export interface InProcessRoute {
  run(call: RouteCall<'agent'>): Promise<unknown>;
  /** The largest body it takes, in bytes (undefined: the server's). */
  bodyLimit?: number;
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

/**
 * Serves one call of a route: validate every part against its contract (the caller is already authenticated), run
 * the handler, shape its answer by the response contract. The same for a request over HTTP and a call in process.
 */
export async function runRoute<A extends AuthKind, B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType>(
  spec: RouteSpec<A, B, Q, P>,
  call: RouteCall<A>,
): Promise<unknown> {
  const { principal } = call;
  if (spec.auth !== 'none' && !principal) throw errors.notAuthenticated();
  const rawBody = call.body === undefined && spec.bodyOptional ? {} : call.body;
  const result = await spec.handler({
    ...call,
    principal: principal as PrincipalOf<A>,
    body: parsePart(spec.body, rawBody, 'body'),
    query: parsePart(spec.query, call.query, 'query'),
    params: parsePart(spec.params, knownIds(call.params), 'path'),
  });
  if (result === NO_CONTENT || result instanceof EncodedJson) return result;
  // Services' replies are trusted on the bus; what leaves the system is shaped by the contract once, here.
  return spec.response ? shapeReply(`${spec.method} ${spec.url}`, spec.response, result) : result;
}

/**
 * Declares one HTTP route, served by `runRoute`: 200 with JSON, or 204. An agent's route can also be called in process
 * (its config's `inProcess`, found by in-process-routes.ts).
 */
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
      ...(spec.auth === 'agent'
        ? {
            inProcess: {
              run: (call) => runRoute(spec, call as RouteCall<A>),
              bodyLimit: spec.bodyLimit,
            } satisfies InProcessRoute,
          }
        : {}),
    },
    handler: async (request, reply) => {
      const result = await runRoute(spec, {
        principal: request.principal as PrincipalOf<A> | null,
        body: request.body,
        query: request.query,
        params: request.params,
        requestId: request.id,
        onClientGone: (listener) => {
          reply.raw.once('close', () => {
            if (!reply.raw.writableFinished) listener();
          });
        },
        method: request.method,
        setHeader: (name, value) => void reply.header(name, value),
        request: (spec.auth === 'agent' ? undefined : request) as RouteInput<A, unknown, unknown, unknown>['request'],
        headers: request.headers,
      });
      if (result === NO_CONTENT) return reply.code(204).send();
      // A large list passed on unread was built field by field from its contract's types by the service that sent it
      // (a test checks its shape on every such route).
      if (result instanceof EncodedJson) return reply.type(JSON_TYPE).send(result.bytes);
      return result;
    },
  });
}
