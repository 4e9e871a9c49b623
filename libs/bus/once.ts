import { AppError, isAppError } from '@agent-auth/errors';
import type { ReplyEnvelope } from '@agent-auth/contracts';
import type { BoundHandler, RequestContext } from './types.js';
import { EncodedJson } from './encoded-json.js';

/**
 * Where a service keeps the outcome of each call of an effect (its own schema, for a while): a call is taken by
 * the first send that reaches a replica, and its outcome is kept before it is answered. An outcome given a key (the
 * call's key, RequestContext.callKey) is kept sealed with it, and opened only with it.
 */
export interface CallOutcomeStore {
  /** Takes the call for this replica; false when a send of it reached another replica (or this one) first. */
  take(callId: string, endpoint: string): Promise<boolean>;
  /**
   * The outcome the replica that took the call kept, waiting for one still at work; undefined when this replica is to
   * serve the call itself (the one that took it is gone, or gave it back, or left nothing in time).
   */
  awaitOutcome(callId: string, key?: string): Promise<ReplyEnvelope | undefined>;
  keep(callId: string, outcome: ReplyEnvelope, key?: string): Promise<void>;
  /** Lets the call be taken again (it failed without an answer of its own: the database, a bug). */
  forget(callId: string): Promise<void>;
}

/** The answer or refusal kept for a call, given again. */
function replay(outcome: ReplyEnvelope): unknown {
  if (outcome.ok) return outcome.data;
  throw new AppError(outcome.error.status, outcome.error.code, outcome.error.detail);
}

/** A call's key as the requester makes it (base64 of 32 random bytes); anything else seals nothing. */
const KEY_BYTES = 32;
const isCallKey = (key: string | undefined): key is string =>
  key !== undefined && /^[A-Za-z0-9+/]{43}=$/.test(key) && Buffer.from(key, 'base64').length === KEY_BYTES;

/**
 * An effect answered once per call: a send of a call that a replica already took is answered with that replica's
 * outcome (its success, or its refusal), not a second effect and not a refusal of the first one's effect. Only
 * calls that may be sent again carry an id (NATS, nats-calls.ts); in one process the handler runs as it is.
 * A confidential endpoint's outcome (a new API key, a TOTP secret, tokens, an upstream's answer) is kept sealed with
 * the call's key, which only the requester holds; a call of one without a key runs as it is, its outcome not kept.
 */
export function onceByCall(bound: BoundHandler, store: CallOutcomeStore): BoundHandler {
  const name = `${bound.endpoint.service}.${bound.endpoint.name}`;
  const confidential = bound.endpoint.confidential === true;
  const handler = async (request: unknown, ctx: RequestContext): Promise<unknown> => {
    const callId = ctx.callId;
    const key = confidential ? ctx.callKey : undefined;
    if (!callId || (confidential && !isCallKey(key))) return bound.handler(request, ctx);
    if (!(await store.take(callId, name))) {
      const earlier = await store.awaitOutcome(callId, key);
      if (earlier) {
        ctx.log.info({ callId }, 'call sent again: answering its first outcome');
        return replay(earlier);
      }
      // The replica that took it left nothing: it died at work. Its effect may or may not stand; the handler's own
      // checks (a row that exists, a state already reached) are what is left to go by.
      ctx.log.warn({ callId }, 'call taken by a replica that left no outcome; serving it here');
    }
    return runAndKeep(bound, { request, ctx, callId, key, store });
  };
  return { ...bound, handler };
}

/** Runs the effect and keeps its outcome (an answer, or a refusal) before it is answered. */
async function runAndKeep(
  bound: BoundHandler,
  call: { request: unknown; ctx: RequestContext; callId: string; key: string | undefined; store: CallOutcomeStore },
): Promise<unknown> {
  const { callId, key, store } = call;
  let data: unknown;
  try {
    data = await bound.handler(call.request, call.ctx);
  } catch (err) {
    if (isAppError(err))
      await store.keep(callId, { ok: false, error: { status: err.status, code: err.code, detail: err.detail } }, key);
    else await store.forget(callId).catch(() => undefined);
    throw err;
  }
  const plain = data instanceof EncodedJson ? JSON.parse(data.bytes.toString('utf8')) : data;
  await store.keep(callId, { ok: true, data: plain }, key);
  return data;
}
