import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AuthKind } from './auth.js';

/** What a route tells the API description about itself (set by addRoute). */
export interface RouteDoc {
  body?: z.ZodType;
  bodyOptional?: boolean;
  query?: z.ZodType;
  params?: z.ZodType;
  response?: z.ZodType;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    doc?: RouteDoc;
  }
}

const SECURITY: Record<AuthKind, Array<Record<string, string[]>>> = {
  agent: [{ apiKey: [] }],
  device: [{ deviceId: [] }],
  none: [],
};

const ERROR = { description: 'Refused; `detail` says why', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

/** Path and query parameters of an operation from their object schemas. */
function parameters(where: 'path' | 'query', schema: z.ZodType | undefined) {
  if (!schema) return [];
  const json = jsonSchema(schema, 'input') as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, s]) => ({ name, in: where, required: where === 'path' || (json.required ?? []).includes(name), schema: s }));
}

function operation(method: string, url: string, auth: AuthKind, doc: RouteDoc) {
  const op: Record<string, unknown> = {
    operationId: `${method.toLowerCase()}${url.replace(/[/:{}-]+(\w)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
    security: SECURITY[auth],
    parameters: [...parameters('path', doc.params), ...parameters('query', doc.query)],
    responses: {
      200: { description: 'Success', content: { 'application/json': { schema: doc.response ? jsonSchema(doc.response, 'output') : {} } } },
      400: ERROR, 401: ERROR, 403: ERROR, 404: ERROR, 409: ERROR, 413: ERROR, 429: ERROR,
    },
  };
  if (doc.body) op.requestBody = { required: !doc.bodyOptional, content: { 'application/json': { schema: jsonSchema(doc.body, 'input') } } };
  return op;
}

/**
 * Collects every contract-described route registered after it into an OpenAPI 3.1 document, generated from the
 * same zod schemas that validate the requests, so the description cannot drift from what the gateway accepts.
 */
export function openApiCatalog(app: FastifyInstance, options: { prefix: string; title: string; version: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  app.addHook('onRoute', (route) => {
    const doc = route.config?.doc;
    if (!doc || !route.url.startsWith(options.prefix)) return;
    const path = route.url.slice(options.prefix.length).replace(/:(\w+)/g, '{$1}');
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      (paths[path] ??= {})[method.toLowerCase()] = operation(method, path, route.config?.auth ?? 'none', doc);
    }
  });
  let built: unknown;
  return {
    /** The document (built once, after every route is registered). */
    document() {
      built ??= {
        openapi: '3.1.0',
        info: { title: options.title, version: options.version },
        servers: [{ url: options.prefix }],
        components: {
          securitySchemes: {
            apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: "An agent's API key (aa_…)" },
            deviceId: { type: 'apiKey', in: 'header', name: 'X-Device-Id', description: 'A device id (dev_…)' },
          },
          schemas: { Error: { type: 'object', required: ['detail'], properties: { detail: { type: 'string' } } } },
        },
        paths,
      };
      return built;
    },
  };
}
