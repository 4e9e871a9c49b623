// Requests generated from the service's own OpenAPI document: every operation, with values that follow its
// schemas, values that break them, and hostile transport (wrong credentials, methods, content types, raw bytes).
import fc from 'fast-check';

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  format?: string;
};

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: JsonSchema;
}

/** One operation of the document: what the fuzz needs to call it. */
export interface Operation {
  method: string;
  path: string;
  auth: 'agent' | 'device' | 'none';
  parameters: Parameter[];
  body?: { required: boolean; schema: JsonSchema };
}

/** Credentials and real ids of the account the fuzz runs against. */
export interface FuzzContext {
  apiKey: string;
  deviceId: string;
  ids: string[];
}

/** A generated HTTP request, ready for fetch. */
export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** How long the request may be held by design before it answers (a hook call waits for the holder). */
  holdsMs: number;
}

/** A hook call waits for the holder up to its `timeout` (290 s by default): the fuzz always asks for 1 s. */
const HOOK_HOLD_SECONDS = 1;

/** The operations of an OpenAPI 3.1 document as the gateway builds it (security apiKey / deviceId / none). */
export function operationsOf(doc: { paths: Record<string, Record<string, Record<string, unknown>>> }): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const security = (op.security as Array<Record<string, unknown>> | undefined) ?? [];
      const auth = security.some((s) => 'apiKey' in s)
        ? 'agent'
        : security.some((s) => 'deviceId' in s)
          ? 'device'
          : 'none';
      const content = op.requestBody as
        | { required?: boolean; content?: Record<string, { schema: JsonSchema }> }
        | undefined;
      ops.push({
        method: method.toUpperCase(),
        path,
        auth,
        parameters: (op.parameters as Parameter[] | undefined) ?? [],
        body: content?.content
          ? { required: content.required ?? false, schema: content.content['application/json']!.schema }
          : undefined,
      });
    }
  }
  return ops;
}

// Strings that tend to break things: control characters, separators, quotes, long runs, odd unicode.
const nasty = fc.constantFrom(
  '',
  ' ',
  '\n',
  'a\r\nb',
  '\u0000',
  '\u2028',
  '%0A',
  '../../etc/passwd',
  "' or 1=1 --",
  '<script>',
  '{}',
  '[]',
  'null',
  '😀'.repeat(40),
  'x'.repeat(5000),
  '\uFFFF',
  '\uD800',
  'act_',
  'rul_\n',
  '-1',
  '1e309',
  'NaN',
  'true',
);
const anyString = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }), nasty);
const anyNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -1, 1e15, 0.001, 2 ** 53),
);

/** Any JSON value, nested at most a few levels (deep nesting has its own case). */
const anyJson: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 3 }).map((v) => v as unknown);

/** A value nested `levels` deep: the depth bound's own case. */
const deepJson = fc.integer({ min: 20, max: 200 }).map((levels) => {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { k: v };
  return v;
});

/** Values that follow a JSON schema (as zod writes them), most of the time; anything at all now and then. */
export function valueFor(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const wild = depth > 4 ? anyJson : fc.oneof(anyJson, deepJson);
  return fc.oneof({ weight: 6, arbitrary: conforming(schema ?? {}, depth) }, { weight: 1, arbitrary: wild });
}

function conforming(schema: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const union = schema.anyOf ?? schema.oneOf;
  if (union?.length) return fc.oneof(...union.map((s) => conforming(s, depth)));
  if (schema.allOf?.length) return conforming(schema.allOf[0]!, depth);
  const type = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (type.length > 1) return fc.oneof(...type.map((t) => conforming({ ...schema, type: t }, depth)));
  switch (type[0]) {
    case 'string':
      return fc.oneof(
        {
          weight: 3,
          arbitrary: fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 30, 60) }),
        },
        {
          weight: 1,
          arbitrary: schema.format === 'uri' || /url/i.test(schema.pattern ?? '') ? fc.webUrl() : anyString,
        },
      );
    case 'integer':
      return fc.oneof(
        fc.integer({
          min: Math.ceil(schema.minimum ?? -10),
          max: Math.floor(Math.min(schema.maximum ?? 1000, 2 ** 31)),
        }),
        anyNumber,
      );
    case 'number':
      return fc.oneof(
        fc.double({
          min: schema.minimum ?? schema.exclusiveMinimum ?? -1000,
          max: Math.min(schema.maximum ?? 1e6, 1e9),
          noNaN: true,
        }),
        anyNumber,
      );
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return depth > 4
        ? fc.constant([])
        : fc.array(valueFor(schema.items, depth + 1), { maxLength: Math.min(schema.maxItems ?? 5, 8) });
    default: {
      if (depth > 4 || !schema.properties) return fc.dictionary(fc.string({ maxLength: 10 }), anyJson, { maxKeys: 4 });
      const required = new Set(schema.required ?? []);
      const entries = Object.entries(schema.properties).map(([k, s]) => [k, valueFor(s, depth + 1)] as const);
      return fc.record(Object.fromEntries(entries), {
        requiredKeys: [...required].filter((k) => k in schema.properties!),
      });
    }
  }
}

/** A path parameter: a real id of the account most often, else anything (control characters included). */
function pathValue(ctx: FuzzContext): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...ctx.ids) },
    { weight: 2, arbitrary: anyString.filter((s) => s.length > 0) },
  );
}

// Lone surrogates cannot be percent-encoded (a client could not send them either): made well-formed first.
const encode = (s: string) => encodeURIComponent(s.toWellFormed());
const encodeSegment = (s: string) => encode(s).replace(/\./g, '%2E');

/** Requests for the operations: valid-looking most of the time, each part broken on purpose now and then. */
export function requestOf(ops: Operation[], ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  return fc.constantFrom(...ops).chain((op) => {
    const pathParams = op.parameters.filter((p) => p.in === 'path');
    // `wait` holds a read open for up to 60 s by design: not an answer the 2 s bound applies to. A hook call is held
    // for its `timeout`, which the fuzz sets itself.
    const isHook = op.path.startsWith('/hooks/');
    const queryParams = op.parameters.filter(
      (p) => p.in === 'query' && p.name !== 'wait' && !(isHook && p.name === 'timeout'),
    );
    const credentials = fc.oneof(
      {
        weight: 8,
        arbitrary: fc.constant(
          op.auth === 'agent'
            ? { 'x-api-key': ctx.apiKey }
            : op.auth === 'device'
              ? { 'x-device-id': ctx.deviceId }
              : {},
        ),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          {},
          { 'x-api-key': ctx.apiKey },
          { 'x-device-id': ctx.deviceId },
          { 'x-api-key': 'aa_nope' },
          { 'x-device-id': 'dev_\u00ff' },
        ),
      },
    );
    const query = fc.record(
      Object.fromEntries(queryParams.map((p) => [p.name, fc.oneof(valueFor(p.schema), anyString)])),
      { requiredKeys: [] },
    );
    const body = op.body
      ? fc.oneof(
          {
            weight: 8,
            arbitrary: valueFor(op.body.schema).map((v) => ({
              text: JSON.stringify(v) as string | undefined,
              type: 'application/json',
            })),
          },
          {
            weight: 1,
            arbitrary: fc.constantFrom<{ text: string | undefined; type: string }>(
              { text: undefined, type: 'application/json' },
              { text: '{"a":', type: 'application/json' },
              { text: 'a=1', type: 'application/x-www-form-urlencoded' },
              { text: '{}', type: 'text/plain' },
              { text: '\u0000', type: 'application/json' },
              { text: '[]', type: 'application/json; charset=latin1' },
            ),
          },
        )
      : fc.oneof(
          { weight: 9, arbitrary: fc.constant({ text: undefined as string | undefined, type: '' }) },
          {
            weight: 1,
            arbitrary: anyJson.map((v) => ({
              text: JSON.stringify(v) as string | undefined,
              type: 'application/json',
            })),
          },
        );
    const method = fc.oneof(
      { weight: 12, arbitrary: fc.constant(op.method) },
      { weight: 1, arbitrary: fc.constantFrom('HEAD', 'OPTIONS', 'PATCH', 'PUT', 'DELETE', 'GET') },
    );
    const extraHeaders = fc.oneof(
      { weight: 6, arbitrary: fc.constant({} as Record<string, string>) },
      {
        weight: 1,
        arbitrary: fc.record({
          'idempotency-key': fc.string({ minLength: 1, maxLength: 20 }).filter((s) => /^[\x20-\x7e]+$/.test(s)),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          { 'x-request-id': '\u00e9\u00e9' },
          { 'x-forwarded-for': '1.2.3.4' },
          { 'idempotency-key': ' ' },
        ),
      },
    );
    return fc
      .record({
        method,
        credentials,
        query,
        body,
        extraHeaders,
        params: fc.tuple(...pathParams.map(() => pathValue(ctx))),
      })
      .map(({ method, credentials, query, body, extraHeaders, params }) => {
        let path = op.path;
        for (const [i, p] of pathParams.entries())
          path = path.replace(`{${p.name}}`, encodeSegment(params[i] as string));
        const qs = Object.entries(query).map(
          ([k, v]) => `${encode(k)}=${encode(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))}`,
        );
        if (isHook) qs.push(`timeout=${HOOK_HOLD_SECONDS}`);
        const headers: Record<string, string> = { ...credentials, ...extraHeaders };
        if (body.text !== undefined && body.type) headers['content-type'] = body.type;
        const sendsBody = body.text !== undefined && method !== 'GET' && method !== 'HEAD';
        return {
          method,
          path: qs.length ? `${path}?${qs.join('&')}` : path,
          headers,
          body: sendsBody ? body.text : undefined,
          holdsMs: isHook ? HOOK_HOLD_SECONDS * 1000 : 0,
        };
      });
  });
}
