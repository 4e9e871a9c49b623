import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { describeZodError, ReplyEnvelope, type EndpointDef } from '@agent-auth/contracts';
import { AppError, errors, isAppError } from '@agent-auth/errors';
import type { Logger } from 'pino';
import type { BoundHandler, Handler, RequestContext } from './types.js';

/** Pairs an endpoint of a catalog with its handler, checking the handler's types against the contract. */
export function handle<E extends EndpointDef>(endpoint: E, handler: Handler<E>): BoundHandler {
  return { endpoint, handler: handler as BoundHandler['handler'] };
}

/**
 * Serves one message whatever the transport: validates the request against the contract, runs the handler,
 * and turns every outcome, including unexpected exceptions, into a reply envelope. Never throws.
 */
export async function dispatch(bound: BoundHandler, raw: string, requestId: string | undefined, log: Logger): Promise<ReplyEnvelope> {
  const ctx: RequestContext = { requestId: requestId ?? randomUUID(), log: log.child({ reqId: requestId, endpoint: bound.endpoint.name }) };
  try {
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      throw errors.badRequest('Message is not valid JSON');
    }
    const parsed = bound.endpoint.request.safeParse(json);
    if (!parsed.success) throw errors.badRequest(describeZodError(parsed.error, 'message', json));
    const data = await bound.handler(parsed.data, ctx);
    return { ok: true, data };
  } catch (err) {
    if (isAppError(err)) return { ok: false, error: err.toJSON() };
    ctx.log.error({ err }, 'handler failed');
    return { ok: false, error: errors.internal('Internal error').toJSON() };
  }
}

/** Reads a reply envelope on the requesting side: the result parsed by the endpoint's response schema, or the AppError. */
export function decodeReply<E extends EndpointDef>(endpoint: E, raw: string): z.output<E['response']> {
  let envelope: ReplyEnvelope;
  try {
    envelope = ReplyEnvelope.parse(JSON.parse(raw));
  } catch {
    throw errors.internal(`Malformed reply from ${endpoint.service}.${endpoint.name}`);
  }
  if (!envelope.ok) throw new AppError(envelope.error.status, envelope.error.code, envelope.error.detail);
  const parsed = endpoint.response.safeParse(envelope.data);
  if (!parsed.success) throw errors.internal(`Reply of ${endpoint.service}.${endpoint.name} broke its contract: ${describeZodError(parsed.error, 'reply')}`);
  return parsed.data as z.output<E["response"]>;
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
