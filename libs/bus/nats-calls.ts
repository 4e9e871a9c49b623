import { randomBytes } from 'node:crypto';
import { createInbox, headers, type Msg, type NatsConnection, nuid } from '@nats-io/transport-node';
import { type EndpointDef, subjectOf } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { type BusResendReason, recordBusResend } from '@agent-auth/metrics';
import type { Logger } from 'pino';
import type { RequestOptions } from './types.js';

/** The headers a request carries on NATS: its log id, its call id (the same on every send), and which send it is. */
export const REQUEST_ID = 'x-request-id';
export const CALL_ID = 'x-call-id';
export const RESENT = 'x-resent';
/**
 * The key of a call of a confidential endpoint (EndpointDef.confidential), the same on every send: a serving side
 * that keeps the call's outcome for a resend keeps it sealed with it. Never logged, never stored.
 */
export const CALL_KEY = 'x-call-key';

/** How a requester tells a dead or silent replica from a busy one, and how long it waits for one to appear. */
export interface CallTimings {
  /** A replica that has sent nothing (answer or progress) this long after a send is taken for dead. */
  firstWordMs: number;
  /** A replica whose progress stops for this long is taken for dead. */
  silenceMs: number;
  /** Sends of one request at most: the first and its resends after a dead replica. */
  attempts: number;
  /** How long a request waits for a replica to appear when none listens (NATS "no responders"). */
  noRespondersWaitMs: number;
  /** How long a request waits for the lost connection to NATS to come back before it is refused (503). */
  disconnectedWaitMs: number;
}

export const defaultCallTimings: CallTimings = {
  firstWordMs: 300,
  silenceMs: 500,
  attempts: 3,
  noRespondersWaitMs: 2000,
  disconnectedWaitMs: 3000,
};

interface Call {
  endpoint: EndpointDef;
  subject: string;
  data: string;
  reply: string;
  requestId: string | undefined;
  callId: string;
  /** The call's key (CALL_KEY), for a confidential endpoint only. */
  key: string | undefined;
  /** Sends after a dead replica (a resend after a reconnect or to a replica that appeared is not counted). */
  sends: number;
  resends: number;
  sentAt: number;
  /** When the replica last said something since the last send (0: nothing yet). */
  heardAt: number;
  startedAt: number;
  deadline: number;
  /** How long "no responders" is waited out, and until when (0: not met yet). */
  replicaWaitMs: number;
  noRespondersUntil: number;
  timer: NodeJS.Timeout | undefined;
  resolve: (msg: Msg) => void;
  reject: (err: unknown) => void;
}

/**
 * Request-reply over NATS that survives a replica's death within the caller's request: every call gets one reply
 * subject under a single inbox subscription, and an id that stays the same on every send, so a resend can land on
 * any replica and the serving side can tell it from a new request. A replica that takes a request and works on it
 * longer than a moment says so on the reply subject (an empty message, nats-bus.ts); a replica that says nothing at
 * all, or stops saying it, is taken for dead and the request is sent again to whoever listens. The first answer to
 * come back, from any send, is the answer. Nothing is added to a request answered at once: no progress message, no
 * subscription of its own.
 */
export function createCalls(
  nc: NatsConnection,
  options: { prefix: string; timeoutMs: number; timings: CallTimings; log: Logger },
) {
  const { prefix, timings, log } = options;
  const inbox = createInbox();
  const callBase = nuid.next();
  let counter = 0;
  const calls = new Map<string, Call>();
  let disconnectedAt = 0;
  // How long replicas take to say their first word (answer or progress), averaged: when every replica is slow to
  // read its messages (a loaded machine), waiting only the fixed BUS_FIRST_WORD_MS would take live replicas for dead
  // and add resends to the load. The wait is the larger of the setting and four times this.
  let firstWordAvgMs = 0;
  const firstWordLimit = () => Math.max(timings.firstWordMs, 4 * firstWordAvgMs);

  const finish = (token: string, call: Call) => {
    calls.delete(token);
    if (call.timer) clearTimeout(call.timer);
  };

  const send = (call: Call, now: number) => {
    const h = headers();
    if (call.requestId) h.set(REQUEST_ID, call.requestId);
    h.set(CALL_ID, call.callId);
    if (call.key) h.set(CALL_KEY, call.key);
    if (call.sends + call.resends > 0) h.set(RESENT, String(call.sends + call.resends));
    call.sentAt = now;
    call.heardAt = 0;
    nc.publish(call.subject, call.data, { reply: call.reply, headers: h });
  };

  const arm = (token: string, call: Call, ms: number) => {
    if (call.timer) clearTimeout(call.timer);
    // Decided after the pending input is read (setImmediate runs after the I/O poll): a timer that fires late
    // because this process was busy does not take a replica for dead whose word is already waiting to be read.
    call.timer = setTimeout(() => setImmediate(() => check(token)), Math.max(1, ms));
  };

  /** A send again, counted by why (the warning line of a dead replica is written where it is decided). */
  const counted = (call: Call, reason: BusResendReason) =>
    recordBusResend(`${call.endpoint.service}.${call.endpoint.name}`, reason);

  const fail = (token: string, call: Call, err: unknown) => {
    finish(token, call);
    call.reject(err);
  };

  /** Decides what a call's silence means: wait on, send again, or give up. */
  const check = (token: string) => {
    const call = calls.get(token);
    if (!call) return;
    const now = performance.now();
    if (disconnectedAt) {
      const down = now - Math.max(disconnectedAt, call.startedAt);
      if (down >= timings.disconnectedWaitMs || now >= call.deadline)
        return fail(token, call, errors.serviceUnavailable(call.endpoint.service));
      return arm(token, call, Math.min(timings.disconnectedWaitMs - down, call.deadline - now));
    }
    if (now >= call.deadline) {
      // Still waiting for a replica to appear is "not available", not "did not answer".
      const unavailable = call.noRespondersUntil && !call.heardAt;
      const { service } = call.endpoint;
      return fail(token, call, unavailable ? errors.serviceUnavailable(service) : errors.serviceTimeout(service));
    }
    const limit = call.heardAt ? timings.silenceMs : firstWordLimit();
    const quiet = now - (call.heardAt || call.sentAt);
    if (quiet < limit) return arm(token, call, Math.min(limit - quiet, call.deadline - now));
    if (call.sends + 1 >= timings.attempts) return arm(token, call, call.deadline - now); // the old time-out's floor
    call.sends++;
    log.warn(
      { subject: call.subject, reqId: call.requestId, send: call.sends + 1 },
      'no word from the replica; sending the request again',
    );
    counted(call, 'silent');
    resend(token, call, now);
  };

  const resend = (token: string, call: Call, now: number) => {
    try {
      send(call, now);
    } catch (err) {
      return fail(token, call, err);
    }
    arm(token, call, Math.min(firstWordLimit(), call.deadline - now));
  };

  /** No replica listens: one may be starting or reconnecting, so the request is sent again shortly, for a while. */
  const noResponders = (token: string, call: Call) => {
    const now = performance.now();
    // A replica still working on an earlier send is heard from; its answer is awaited.
    if (call.heardAt && now - call.heardAt < timings.silenceMs) return;
    call.noRespondersUntil ||= now + call.replicaWaitMs;
    if (now >= Math.min(call.noRespondersUntil, call.deadline))
      return fail(token, call, errors.serviceUnavailable(call.endpoint.service));
    if (call.timer) clearTimeout(call.timer);
    const pause = Math.min(200, 25 * 2 ** Math.min(call.resends, 3));
    call.timer = setTimeout(() => {
      if (!calls.has(token)) return;
      call.resends++;
      counted(call, 'no_responders');
      resend(token, call, performance.now());
    }, pause);
  };

  nc.subscribe(`${inbox}.*`, {
    callback: (err, msg) => {
      if (err) return;
      const token = msg.subject.slice(inbox.length + 1);
      const call = calls.get(token);
      if (!call) return; // answered already, by another send
      if (!call.heardAt && call.sentAt && !msg.headers?.code) {
        firstWordAvgMs += (performance.now() - call.sentAt - firstWordAvgMs) / 16;
      }
      if (msg.data.length > 0) {
        finish(token, call);
        return call.resolve(msg);
      }
      if (msg.headers?.code === 503) return noResponders(token, call);
      call.heardAt = performance.now(); // progress: the replica is alive and working on it
    },
  });

  return {
    /** The connection went away: calls stop counting silence and wait for it to come back, for a while. */
    disconnected() {
      disconnectedAt ||= performance.now();
      for (const [token, call] of calls) arm(token, call, 1);
    },
    /** The connection is back: what was sent before it went is sent again (its answer may have been lost). */
    reconnected() {
      const since = disconnectedAt;
      disconnectedAt = 0;
      const now = performance.now();
      for (const [token, call] of calls) {
        if (!call.sentAt || call.sentAt <= since) {
          if (call.sentAt) {
            call.resends++;
            counted(call, 'reconnect');
          }
          resend(token, call, now);
        } else arm(token, call, firstWordLimit());
      }
    },
    /** The connection is closed: what still waits is refused at once, not at its deadline. */
    closed() {
      for (const [token, call] of calls) fail(token, call, errors.serviceUnavailable(call.endpoint.service));
    },
    request(endpoint: EndpointDef, payload: unknown, opts: RequestOptions = {}): Promise<Msg> {
      return new Promise<Msg>((resolve, reject) => {
        const now = performance.now();
        const token = (++counter).toString(36);
        const call: Call = {
          endpoint,
          subject: subjectOf(prefix, endpoint),
          data: JSON.stringify(payload),
          reply: `${inbox}.${token}`,
          requestId: opts.requestId,
          callId: `${callBase}.${token}`,
          key: endpoint.confidential ? randomBytes(32).toString('base64') : undefined,
          sends: 0,
          resends: 0,
          sentAt: 0,
          heardAt: 0,
          startedAt: now,
          deadline: now + (opts.timeoutMs ?? options.timeoutMs),
          replicaWaitMs: opts.replicaWaitMs ?? timings.noRespondersWaitMs,
          noRespondersUntil: 0,
          timer: undefined,
          resolve,
          reject,
        };
        calls.set(token, call);
        if (disconnectedAt) return arm(token, call, 1); // sent once the connection is back, or refused
        try {
          send(call, now);
        } catch (err) {
          return fail(token, call, err);
        }
        arm(token, call, Math.min(firstWordLimit(), call.deadline - now));
      });
    },
  };
}
