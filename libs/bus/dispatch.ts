import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { EndpointDef, ReplyEnvelope } from '@agent-auth/contracts';
import { AppError, errors, isAppError, isDatabaseUnavailable, printableDetail } from '@agent-auth/errors';
import type { Logger } from 'pino';
import type { BoundHandler, Handler, RequestContext, RequestLogger } from './types.js';
import { EncodedJson } from './encoded-json.js';

/** Pairs an endpoint of a catalog with its handler, checking the handler's types against the contract. */
export function handle<E extends EndpointDef>(endpoint: E, handler: Handler<E>): BoundHandler {
  return { endpoint, handler: handler as BoundHandler['handler'] };
}

/**
 * The same for an effect that state alone cannot tell was made (a new rule, a deletion): the serving scaffold keeps
 * its outcome per call, so a send of it again after a replica died answers the first outcome (once.ts).
 */
export function handleOnce<E extends EndpointDef>(endpoint: E, handler: Handler<E>): BoundHandler {
  return { endpoint, handler: handler as BoundHandler['handler'], once: true };
}

/**
 * A request's logger: its lines carry the request id and the endpoint. The child logger that binds them is only
 * built when a line is written at an enabled level (most requests never write one: building the child serializes
 * its bindings). One plain object per request, where a Proxy over the logger cost a trap and a bind on every call.
 */
class RequestLog implements RequestLogger {
  private child: Logger | undefined;
  constructor(
    private readonly base: Logger,
    private readonly reqId: string,
    private readonly endpoint: string,
  ) {}
  private write(level: 'trace' | 'debug' | 'info' | 'warn' | 'error', args: unknown[]): void {
    if (!this.base.isLevelEnabled(level)) return;
    this.child ??= this.base.child({ reqId: this.reqId, endpoint: this.endpoint });
    (this.child[level] as (...line: unknown[]) => void).apply(this.child, args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
}

/** Which call a message belongs to: the id every send of it carries, and whether this is a send after the first. */
export interface CallOf {
  callId: string;
  resent: boolean;
  /** The call's key, for a confidential endpoint (RequestContext.callKey). */
  callKey?: string;
}

function contextOf(
  bound: BoundHandler,
  requestId: string | undefined,
  log: Logger,
  call: CallOf | undefined,
): RequestContext {
  const id = requestId ?? randomUUID();
  const ctx: RequestContext = { requestId: id, log: new RequestLog(log, id, bound.endpoint.name) };
  if (call) {
    ctx.callId = call.callId;
    ctx.resent = call.resent;
    if (call.callKey) ctx.callKey = call.callKey;
  }
  return ctx;
}

/**
 * Serves one message whatever the transport: runs the handler and turns every outcome, including unexpected
 * exceptions, into a reply envelope. Never throws. The message is trusted to follow the endpoint's contract: the
 * sender built it from that contract's output type, and what came from outside was validated once, at the edge
 * (the gateway); a message that is not even an object is refused.
 */
export async function dispatch(
  bound: BoundHandler,
  message: unknown,
  requestId: string | undefined,
  log: Logger,
  call?: CallOf | '' | undefined,
): Promise<ReplyEnvelope> {
  return settle(bound, message, contextOf(bound, requestId, log, call || undefined));
}

async function settle(bound: BoundHandler, message: unknown, ctx: RequestContext): Promise<ReplyEnvelope> {
  try {
    if (message === undefined) throw errors.malformedMessage();
    if (typeof message !== 'object' || message === null || Array.isArray(message))
      throw errors.invalidRequest('message: must be an object');
    const data = await bound.handler(message, ctx);
    return { ok: true, data };
  } catch (err) {
    // Built field by field (an error from another copy of the errors module may lack toJSON), detail made printable.
    if (isAppError(err))
      return { ok: false, error: { status: err.status, code: err.code, detail: printableDetail(err.detail) } };
    if (isDatabaseUnavailable(err)) {
      // The database restarting or failing over: a 503 to retry, not a bug.
      ctx.log.warn({ err }, 'database unavailable');
      return { ok: false, error: errors.databaseUnavailable().toJSON() };
    }
    ctx.log.error({ err }, 'handler failed');
    return { ok: false, error: errors.internal().toJSON() };
  }
}

/**
 * Encodes a reply envelope for the wire; an answer's data follows a fixed prefix, so it can be passed on unread, and
 * data already encoded by the handler goes out as it is.
 */
export function encodeReply(reply: ReplyEnvelope): string | Buffer {
  if (!reply.ok || reply.data === undefined) return JSON.stringify(reply);
  if (reply.data instanceof EncodedJson) return Buffer.concat([PREFIX_BYTES, ...reply.data.parts, CLOSING]);
  return `${ANSWER_PREFIX}${JSON.stringify(reply.data)}}`;
}

const ANSWER_PREFIX = '{"ok":true,"data":';
const PREFIX_BYTES = Buffer.from(ANSWER_PREFIX);
const CLOSING_BRACE = 0x7d;
const CLOSING = Buffer.from('}');

/**
 * The data of an answer encoded by encodeReply, as the JSON bytes it was sent as; undefined for anything else (an
 * error, an answer without data), which the caller decodes in full. A view, not a copy: the NATS client gives each
 * message bytes of its own (a fresh read buffer or a fresh payload buffer), never reused for a later message.
 */
export function answeredBytes(raw: Uint8Array): Buffer | undefined {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  if (bytes.length <= PREFIX_BYTES.length || bytes[bytes.length - 1] !== CLOSING_BRACE) return undefined;
  if (!bytes.subarray(0, PREFIX_BYTES.length).equals(PREFIX_BYTES)) return undefined;
  return bytes.subarray(PREFIX_BYTES.length, bytes.length - 1);
}

/** Parses a message's JSON text; what is not JSON becomes a value dispatch refuses. */
export function parseMessage(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/** The answer of a reply envelope as JSON bytes: the handler's own encoding if it made one, else encoded now. */
export function encodedAnswer<E extends EndpointDef>(endpoint: E, envelope: ReplyEnvelope): EncodedJson {
  if (envelope.ok && envelope.data instanceof EncodedJson) return envelope.data;
  return EncodedJson.of(decodeReply(endpoint, envelope));
}

/**
 * Reads a reply envelope on the requesting side: the result, or the AppError. The result is trusted to follow the
 * endpoint's response contract (the replying side built it from that type); only the envelope's shape is checked,
 * by hand, so a reply costs no schema walk. The gateway shapes what leaves the system by the contract (route.ts).
 */
export function decodeReply<E extends EndpointDef>(endpoint: E, envelope: unknown): z.output<E['response']> {
  const reply = envelope as Partial<{
    ok: boolean;
    data: unknown;
    error: { status?: unknown; code?: unknown; detail?: unknown };
  }> | null;
  if (reply?.ok === true) {
    // Only a transport that passes objects (in-process) hands over a handler's pre-encoded answer.
    if (reply.data instanceof EncodedJson) return JSON.parse(reply.data.bytes.toString('utf8'));
    return reply.data as z.output<E['response']>;
  }
  const error = reply?.ok === false ? reply.error : undefined;
  if (typeof error?.status === 'number' && typeof error.code === 'string' && typeof error.detail === 'string') {
    throw new AppError(error.status, error.code, error.detail);
  }
  throw errors.malformedReply(`${endpoint.service}.${endpoint.name}`);
}

/** A counting semaphore: bounds how many handlers of a service run at once in this process. */
export function createLimiter(max: number) {
  let active = 0;
  const waiting: Array<() => void> = [];
  let idle: (() => void) | null = null;
  return {
    async run<T>(task: () => Promise<T>): Promise<T> {
      if (active >= max) await new Promise<void>((resolve) => waiting.push(resolve));
      active++;
      try {
        return await task();
      } finally {
        active--;
        const next = waiting.shift();
        if (next) next();
        else if (active === 0 && idle) idle();
      }
    },
    /** Resolves once nothing is running or waiting. */
    async drained(): Promise<void> {
      if (active === 0 && waiting.length === 0) return;
      await new Promise<void>((resolve) => (idle = resolve));
    },
  };
}
