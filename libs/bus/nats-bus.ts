import { connect, type NatsConnection } from '@nats-io/transport-node';
import { STATUS_CODES } from 'node:http';
import { Svcm, type ServiceMsg } from '@nats-io/services';
import { type EndpointDef, eventSubjectOf, subjectOf, type ReplyEnvelope } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import type { Logger } from 'pino';
import { answeredBytes, createLimiter, decodeReply, dispatch, encodeReply, parseMessage } from './dispatch.js';
import type { Bus, RequestOptions } from './types.js';
import { EncodedJson } from './encoded-json.js';
import { recordBusHandled } from '@agent-auth/metrics';
import { timedRequest } from './request-metrics.js';
import { createJetStreamActionEvents } from './jetstream-action-events.js';
import {
  CALL_ID,
  CALL_KEY,
  type CallTimings,
  createCalls,
  defaultCallTimings,
  REQUEST_ID,
  RESENT,
} from './nats-calls.js';
import { createProgress } from './progress.js';

/** How a process's NATS connection comes back after a restart, and how its requests ride one out. */
export interface Resilience extends CallTimings {
  /** Pause between reconnect attempts (plus up to `reconnectJitterMs`, so replicas do not come back in step). */
  reconnectWaitMs: number;
  reconnectJitterMs: number;
  /** A serving replica's progress interval on a request it is still working on (the first after half of it). */
  heartbeatMs: number;
}

export const defaultResilience: Resilience = {
  ...defaultCallTimings,
  reconnectWaitMs: 250,
  reconnectJitterMs: 100,
  heartbeatMs: 150,
};

/**
 * Answers a request. The envelope travels in the body only: the micro API's error headers carry just the status
 * and its fixed reason phrase, never text a caller could have shaped (a CR or LF there makes the reply unsendable).
 * If the reply cannot be sent, a plain error reply is sent instead, so the caller is never left waiting.
 */
function sendReply(msg: ServiceMsg, reply: ReplyEnvelope, log: Logger): void {
  try {
    if (reply.ok) msg.respond(encodeReply(reply));
    else msg.respondError(reply.error.status, STATUS_CODES[reply.error.status] ?? 'Error', encodeReply(reply));
  } catch (err) {
    log.error({ err }, 'reply could not be sent; answering with an error');
    try {
      msg.respond(encodeReply({ ok: false, error: errors.internal().toJSON() }));
    } catch (again) {
      log.error({ err: again }, 'error reply could not be sent either');
    }
  }
}

/** Connects to NATS; services register with the micro API so `nats micro ls/info/stats` sees them. */
export async function connectNatsBus(options: {
  url: string;
  prefix: string;
  timeoutMs: number;
  /** Copies of the action event stream a NATS cluster keeps (1 when absent). */
  streamReplicas?: number;
  /** Hours the action event stream keeps an event (a week when absent). */
  streamMaxAgeHours?: number;
  name: string;
  log: Logger;
  /** Detection of dead replicas and reconnection (defaultResilience when absent). */
  resilience?: Partial<Resilience>;
}): Promise<Bus> {
  const resilience = { ...defaultResilience, ...options.resilience };
  const nc: NatsConnection = await connect({
    servers: options.url.split(','),
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: resilience.reconnectWaitMs,
    reconnectJitter: resilience.reconnectJitterMs,
    noAsyncTraces: true,
  }); // no stack captured per request
  const { log, prefix } = options;
  const calls = createCalls(nc, { prefix, timeoutMs: options.timeoutMs, timings: resilience, log });
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') calls.disconnected();
      if (s.type === 'reconnect') calls.reconnected();
      if (s.type === 'disconnect' || s.type === 'reconnect' || s.type === 'error')
        log.warn({ status: s.type }, 'nats connection status');
    }
  })();

  /** Sends a request; no replica and no answer in time become the service's 503 and 504 (nats-calls.ts). */
  const send = (endpoint: EndpointDef, payload: unknown, opts?: RequestOptions) =>
    calls.request(endpoint, payload, opts);

  return {
    kind: 'nats',
    actionEvents: createJetStreamActionEvents(nc, {
      prefix,
      log,
      keeping: { replicas: options.streamReplicas ?? 1, maxAgeHours: options.streamMaxAgeHours ?? 168 },
    }),
    request: (endpoint, payload, opts) =>
      timedRequest(endpoint, async () =>
        decodeReply(endpoint, parseMessage((await send(endpoint, payload, opts)).string())),
      ),
    requestEncoded: (endpoint, payload, opts) =>
      timedRequest(endpoint, async () => {
        const reply = await send(endpoint, payload, opts);
        const bytes = answeredBytes(reply.data);
        return bytes ? new EncodedJson(bytes) : EncodedJson.of(decodeReply(endpoint, parseMessage(reply.string())));
      }),
    async serve(spec) {
      const svc = await new Svcm(nc).add({
        name: spec.name,
        version: spec.version,
        description: spec.description,
        queue: spec.name,
      });
      const limiter = createLimiter(spec.concurrency);
      const progress = createProgress(nc, resilience.heartbeatMs);
      for (const bound of spec.handlers) {
        const served = `${bound.endpoint.service}.${bound.endpoint.name}`;
        svc.addEndpoint(bound.endpoint.name, {
          subject: subjectOf(prefix, bound.endpoint),
          queue: spec.name,
          handler: (err, msg) => {
            if (err) {
              spec.log.error({ err }, 'nats endpoint error');
              return;
            }
            // Counted from when it is taken, queued behind the limiter included: the requester hears of it either way.
            const callId = msg.headers?.get(CALL_ID) || undefined;
            const answered = callId && msg.reply ? progress.taken(msg.reply) : undefined;
            // The micro API does not await handlers: run under the limiter and never let a rejection escape.
            void limiter
              .run(async () => {
                const started = performance.now();
                const reply = await dispatch(
                  bound,
                  parseMessage(msg.string()),
                  msg.headers?.get(REQUEST_ID) || undefined,
                  spec.log,
                  callId && {
                    callId,
                    resent: msg.headers?.has(RESENT) === true,
                    callKey: msg.headers?.get(CALL_KEY) || undefined,
                  },
                );
                // Timed here, not in dispatch: in one process (the in-process bus) the sender's timing is the same
                // span, and recording it twice would only add to every request's cost.
                recordBusHandled(
                  served,
                  reply.ok ? 'ok' : String(reply.error.status),
                  (performance.now() - started) / 1000,
                );
                answered?.();
                sendReply(msg, reply, spec.log);
              })
              .catch((e: unknown) => {
                answered?.();
                spec.log.error({ err: e }, 'handler run failed');
                sendReply(msg, { ok: false, error: errors.internal().toJSON() }, spec.log);
              });
          },
        });
      }
      spec.log.info({ queue_group: spec.name, endpoints: spec.handlers.length }, 'serving on nats');
      return {
        async stop() {
          await svc.stop();
          await limiter.drained();
          progress.stop();
        },
      };
    },
    publish(event, payload) {
      nc.publish(eventSubjectOf(prefix, event), JSON.stringify(payload));
    },
    subscribe(event, listener) {
      const sub = nc.subscribe(eventSubjectOf(prefix, event), {
        callback: (err, msg) => {
          if (err) return;
          const parsed = event.payload.safeParse(msg.json());
          if (parsed.success) listener(parsed.data);
          else log.warn({ event: event.name }, 'dropped malformed event');
        },
      });
      return () => sub.unsubscribe();
    },
    async close() {
      if (!nc.isClosed()) await nc.drain();
      calls.closed();
    },
  };
}
