import { isIP } from 'node:net';
import type { Readable } from 'node:stream';
import { createSecureContext, rootCertificates } from 'node:tls';
import { Agent, errors as undiciErrors } from 'undici';
import { refusalOf } from './address-ranges.js';
import { dropHopByHop, flattenHeaders } from './headers.js';
import { AddressRefusedError, createPinnedLookup, type systemResolver } from './pinned-lookup.js';

/** Why an outbound call did not produce a response: refused by policy, too slow, too big, or the upstream failed. */
export type OutboundFailure = 'refused' | 'timeout' | 'too_large' | 'upstream';

/** An outbound call that produced no usable response; `detail` is safe to show (no secrets, no internals). */
export class OutboundError extends Error {
  constructor(
    readonly kind: OutboundFailure,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'OutboundError';
  }
}

export interface OutboundOptions {
  /** Host names and IP literals (lower case) exempt from the https rule and the address refusal. */
  allowInsecureHosts: readonly string[];
  connectTimeoutMs: number;
  /** Time for the whole response (headers and body) after the connection is open. */
  responseTimeoutMs: number;
  maxResponseBytes: number;
  /** PEM certificates trusted in addition to the system roots (e.g. a test or internal CA). */
  extraCaCerts?: string[];
  /** Replaces the system resolver (tests); whatever it returns is still checked. */
  resolve?: typeof systemResolver;
}

export interface OutboundRequest {
  url: string;
  method: string;
  headers?: Record<string, string>;
  body?: string | Buffer | null;
}

export interface OutboundResponse {
  statusCode: number;
  /** Lower-case names, hop-by-hop headers removed. */
  headers: Record<string, string>;
  body: Buffer;
}

export interface OutboundClient {
  /** Makes one call: redirects are returned, never followed. Throws OutboundError when there is no response. */
  request(input: OutboundRequest): Promise<OutboundResponse>;
  close(): Promise<void>;
}

/**
 * The one way this system calls the internet (vault executions, webhooks): https only (configured development
 * hosts excepted), every resolved address checked and the socket pinned to the checked answer, IP literals checked,
 * no redirects, bounded connect and response time, capped body size.
 */
export function createOutboundClient(options: OutboundOptions): OutboundClient {
  const exempt = new Set(options.allowInsecureHosts.map((h) => h.toLowerCase()));
  const isExempt = (host: string) => exempt.has(host.replace(/^\[|\]$/g, '').toLowerCase());
  // Extra CAs are trusted beside the system roots: that trust store is built once, here. Passed as `ca` instead, every
  // new connection parsed all ~145 roots again: 18 ms of the event loop per connection on the bench's machine.
  const secureContext = options.extraCaCerts?.length
    ? createSecureContext({ ca: [...rootCertificates, ...options.extraCaCerts] })
    : undefined;
  // undici's Agent never follows redirects unless a redirect interceptor is composed in; none is.
  const agent = new Agent({
    connect: {
      lookup: createPinnedLookup(isExempt, options.resolve),
      timeout: options.connectTimeoutMs,
      ...(secureContext ? { secureContext } : {}),
    },
    headersTimeout: options.responseTimeoutMs,
    bodyTimeout: options.responseTimeoutMs,
  });

  return {
    async request(input) {
      const url = checkTarget(input.url, isExempt);
      const deadline = AbortSignal.timeout(options.connectTimeoutMs + options.responseTimeoutMs);
      try {
        const res = await agent.request({
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: input.method.toUpperCase() as 'GET',
          headers: withoutTransportHeaders(input.headers ?? {}),
          body: input.body ?? undefined,
          signal: deadline,
        });
        const body = await readCapped(res.body, res.headers['content-length'], options.maxResponseBytes);
        return { statusCode: res.statusCode, headers: dropHopByHop(flattenHeaders(res.headers)), body };
      } catch (err) {
        throw classifyFailure(err, url.hostname);
      }
    },
    close: () => agent.close(),
  };
}

/** Parses the target and applies the rules that need no network: scheme, and the address of an IP literal. */
export function checkTarget(target: string, isExempt: (host: string) => boolean): URL {
  if (!URL.canParse(target)) throw new OutboundError('refused', 'the target is not an absolute URL');
  const url = new URL(target);
  if (url.username || url.password) throw new OutboundError('refused', 'the target URL may not carry user info');
  const exempt = isExempt(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && exempt)) {
    throw new OutboundError(
      'refused',
      `the target must be an https URL (${url.hostname} is not a configured development host)`,
    );
  }
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(literal) && !exempt) {
    const reason = refusalOf(literal);
    if (reason)
      throw new OutboundError(
        'refused',
        `the target ${literal} is a ${reason} address, which outbound calls may not reach`,
      );
  }
  return url;
}

// The transport owns framing and addressing; letting a caller set these would desynchronise or retarget the call.
const transportHeaders = new Set(['host', 'content-length', 'expect']);

function withoutTransportHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(dropHopByHop(headers)).filter(([k]) => !transportHeaders.has(k.toLowerCase())),
  );
}

async function readCapped(body: Readable, declared: unknown, max: number): Promise<Buffer> {
  const tooLarge = () => {
    // undici reports a destroyed body as an 'error' event; the caller already has its answer, so it is swallowed.
    body.on('error', () => {});
    body.destroy();
    return new OutboundError('too_large', `the upstream response is larger than ${max} bytes`);
  };
  if (typeof declared === 'string' && Number(declared) > max) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function classifyFailure(err: unknown, host: string): OutboundError {
  if (err instanceof OutboundError) return err;
  const refused = findCause(err, (e) => e instanceof AddressRefusedError) as AddressRefusedError | undefined;
  if (refused) return new OutboundError('refused', refused.message);
  const timedOut = findCause(
    err,
    (e) =>
      e instanceof undiciErrors.ConnectTimeoutError ||
      e instanceof undiciErrors.HeadersTimeoutError ||
      e instanceof undiciErrors.BodyTimeoutError ||
      (e as Error).name === 'TimeoutError' ||
      (e as Error).name === 'AbortError',
  );
  if (timedOut) return new OutboundError('timeout', `the upstream ${host} did not answer in time`);
  const code = (
    findCause(err, (e) => typeof (e as { code?: unknown }).code === 'string') as { code?: string } | undefined
  )?.code;
  return new OutboundError('upstream', `the upstream ${host} could not be reached${code ? ` (${code})` : ''}`);
}

function findCause(err: unknown, match: (e: Error) => boolean): Error | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (match(e)) return e;
  }
  return undefined;
}
