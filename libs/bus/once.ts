import { AppError, isAppError } from '@agent-auth/errors';
import type { ReplyEnvelope } from '@agent-auth/contracts';
import type { BoundHandler, RequestContext } from './types.js';
import { EncodedJson } from './encoded-json.js';

/**
 * Where a service keeps the outcome of each call of an effect (its own schema, for a while): a call is taken by
 * the first send that reaches a replica, and its outcome is kept before it is answered.
 */
export interface CallOutcomeStore {
  /** Takes the call for this replica; false when a send of it reached another replica (or this one) first. */
  take(callId: string, endpoint: string): Promise<boolean>;
  /** The outcome the replica that took the call kept, waiting a while for one still at work; undefined if none came. */
  awaitOutcome(callId: string): Promise<ReplyEnvelope | undefined>;
  keep(callId: string, outcome: ReplyEnvelope): Promise<void>;
  /** Lets the call be taken again (it failed without an answer of its own: the database, a bug). */
  forget(callId: string): Promise<void>;
}

/** The answer or refusal kept for a call, given again. */
function replay(outcome: ReplyEnvelope): unknown {
  if (outcome.ok) return outcome.data;
  throw new AppError(outcome.error.status, outcome.error.code, outcome.error.detail);
}

/**
 * An effect answered once per call: a send of a call that a replica already took is answered with that replica's
 * outcome (its success, or its refusal), not a second effect and not a refusal of the first one's effect. Only
 * calls that may be sent again carry an id (NATS, nats-calls.ts); in one process the handler runs as it is.
 * Endpoints whose answer holds a secret (a new API key, a TOTP secret) are not kept this way: the store would hold
 * it.
 */
export function onceByCall(bound: BoundHandler, store: CallOutcomeStore): BoundHandler {
  const name = `${bound.endpoint.service}.${bound.endpoint.name}`;
  const handler = async (request: unknown, ctx: RequestContext): Promise<unknown> => {
    const callId = ctx.callId;
    if (!callId) return bound.handler(request, ctx);
    if (!(await store.take(callId, name))) {
      const earlier = await store.awaitOutcome(callId);
      if (earlier) {
        ctx.log.info({ callId }, 'call sent again: answering its first outcome');
        return replay(earlier);
      }
      // The replica that took it left nothing: it died at work. Its effect may or may not stand; the handler's own
      // checks (a row that exists, a state already reached) are what is left to go by.
      ctx.log.warn({ callId }, 'call taken by a replica that left no outcome; serving it here');
    }
    let data: unknown;
    try {
      data = await bound.handler(request, ctx);
    } catch (err) {
      if (isAppError(err))
        await store.keep(callId, { ok: false, error: { status: err.status, code: err.code, detail: err.detail } });
      else await store.forget(callId).catch(() => undefined);
      throw err;
    }
    const plain = data instanceof EncodedJson ? JSON.parse(data.bytes.toString('utf8')) : data;
    await store.keep(callId, { ok: true, data: plain });
    return data;
  };
  return { ...bound, handler };
}
