import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { catalogue } from '@agent-auth/errors';
import type { AuthKind } from '../adapters/auth.js';

/** The groups of the API reference (GET /docs); every operation names one. */
export const API_TAGS = {
  Accounts: 'Accounts, devices and plans: sign-up, extra devices, TOTP, the signing key, the plan and its quota.',
  Passkeys:
    "The device's passkeys (WebAuthn): approvals the platform authenticator verified (Face ID, fingerprint, PIN).",
  Agents:
    "The account's agents and their API keys (shown once); each agent is also an OpenID CIBA client, whose ping endpoint its holder sets.",
  Actions: 'Action requests: the agent asks, the device approves or denies, rules and limits decide routine cases.',
  Policy: 'Rules, spending limits and standing grants that settle requests without asking, and the spending summary.',
  Vault: 'Credentials kept encrypted, and approved API calls made with them without the agent seeing the secret.',
  Notifications: 'What reaches the device: the live event stream and Web Push subscriptions.',
  Hooks:
    "Coding agents' permission hooks (Claude Code, Codex): the client's own hook input in, its own hook output out, held until the holder decides.",
  Audit:
    "The account's tamper-evident audit chain and its signed head; receipts verify against /.well-known/jwks.json.",
  OAuth:
    "MCP clients connected with OAuth 2.1: the holder's consent on the device app and the connected apps. The OAuth endpoints themselves (/oauth/authorize, /oauth/token, …) and OpenID Connect CIBA (/.well-known/openid-configuration, /oauth/bc-authorize) are in the API guide.",
} as const;
export type ApiTag = keyof typeof API_TAGS;

/** What a route tells the API description about itself (set by addRoute). */
export interface RouteDoc {
  /** One line, shown in the reference's list of operations. */
  summary: string;
  /** What it does, who may call it, and its notable refusals (Markdown). */
  description: string;
  tag: ApiTag;
  /** Answers a Server-Sent Events stream instead of JSON. */
  eventStream?: boolean;
  body?: z.ZodType;
  bodyOptional?: boolean;
  query?: z.ZodType;
  params?: z.ZodType;
  /** Request headers the operation reads besides the credentials (e.g. Idempotency-Key), by name. */
  headers?: Record<string, HeaderDoc>;
  response?: z.ZodType;
  /** Headers of the success answer the operation may set, by name. */
  responseHeaders?: Record<string, HeaderDoc>;
}

/** One documented header: what it means and the values it takes. */
export interface HeaderDoc {
  description: string;
  schema: z.ZodType;
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

const ERROR = {
  description: 'Refused; `code` names the condition (docs/errors.md), `detail` says why',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

/** Path and query parameters of an operation from their object schemas. */
function parameters(where: 'path' | 'query', schema: z.ZodType | undefined) {
  if (!schema) return [];
  const json = jsonSchema(schema, 'input') as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || (json.required ?? []).includes(name),
    schema: s,
  }));
}

/** Header parameters of an operation: optional, as no header but the credentials is ever required. */
function headerParameters(headers: Record<string, HeaderDoc> | undefined) {
  return Object.entries(headers ?? {}).map(([name, h]) => ({
    name,
    in: 'header',
    required: false,
    description: h.description,
    schema: jsonSchema(h.schema, 'input'),
  }));
}

const EVENT_STREAM = { 'text/event-stream': { schema: { type: 'string', description: 'Server-Sent Events' } } };

function operation(method: string, url: string, auth: AuthKind, doc: RouteDoc) {
  const success = doc.eventStream
    ? EVENT_STREAM
    : { 'application/json': { schema: doc.response ? jsonSchema(doc.response, 'output') : {} } };
  const op: Record<string, unknown> = {
    operationId: `${method.toLowerCase()}${url.replace(/[/:{}-]+(\w)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
    summary: doc.summary,
    description: doc.description,
    tags: [doc.tag],
    security: SECURITY[auth],
    parameters: [
      ...parameters('path', doc.params),
      ...parameters('query', doc.query),
      ...headerParameters(doc.headers),
    ],
    responses: {
      200: {
        description: 'Success',
        ...(doc.responseHeaders
          ? {
              headers: Object.fromEntries(
                Object.entries(doc.responseHeaders).map(([name, h]) => [
                  name,
                  { description: h.description, schema: jsonSchema(h.schema, 'output') },
                ]),
              ),
            }
          : {}),
        content: success,
      },
      400: ERROR,
      401: ERROR,
      403: ERROR,
      404: ERROR,
      409: ERROR,
      413: ERROR,
      429: ERROR,
    },
  };
  if (doc.body)
    op.requestBody = {
      required: !doc.bodyOptional,
      content: { 'application/json': { schema: jsonSchema(doc.body, 'input') } },
    };
  return op;
}

/**
 * Collects every contract-described route registered after it into an OpenAPI 3.1 document, generated from the
 * same zod schemas that validate the requests, so the description cannot drift from what the gateway accepts.
 */
export function openApiCatalog(
  app: FastifyInstance,
  options: { prefix: string; title: string; version: string; description: string },
) {
  const paths: Record<string, Record<string, unknown>> = {};
  app.addHook('onRoute', (route) => {
    const doc = route.config?.doc;
    if (!doc || !route.url.startsWith(options.prefix)) return;
    const path = route.url.slice(options.prefix.length).replace(/:(\w+)/g, '{$1}');
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      paths[path] ??= {};
      paths[path][method.toLowerCase()] = operation(method, path, route.config?.auth ?? 'none', doc);
    }
  });
  let built: unknown;
  return {
    /** The document (built once, after every route is registered). */
    document() {
      built ??= {
        openapi: '3.1.0',
        info: {
          title: options.title,
          version: options.version,
          description: options.description,
          license: { name: 'MIT', identifier: 'MIT' },
        },
        tags: Object.entries(API_TAGS).map(([name, description]) => ({ name, description })),
        servers: [{ url: options.prefix }],
        components: {
          securitySchemes: {
            apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: "An agent's API key (aa_…)" },
            deviceId: { type: 'apiKey', in: 'header', name: 'X-Device-Id', description: 'A device id (dev_…)' },
          },
          schemas: {
            Error: {
              type: 'object',
              required: ['code', 'detail'],
              properties: { code: { type: 'string', enum: catalogue.map((e) => e.code) }, detail: { type: 'string' } },
            },
          },
        },
        paths,
      };
      return built;
    },
  };
}
