import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { Svcm } from '@nats-io/services';
import { eventSubjectOf, subjectOf } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import type { Logger } from 'pino';
import { createLimiter, decodeReply, dispatch } from './dispatch.js';
import type { Bus } from './types.js';
import { createJetStreamActionEvents } from './jetstream-action-events.js';

const REQUEST_ID = 'x-request-id';

/** Connects to NATS; services register with the micro API so `nats micro ls/info/stats` sees them. */
export async function connectNatsBus(options: { url: string; prefix: string; timeoutMs: number; name: string; log: Logger }): Promise<Bus> {
  const nc: NatsConnection = await connect({ servers: options.url.split(','), name: options.name, maxReconnectAttempts: -1 });
  const { log, prefix } = options;
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect' || s.type === 'error') log.warn({ status: s.type }, 'nats connection status');
    }
  })();

  return {
    kind: 'nats',
    actionEvents: createJetStreamActionEvents(nc, prefix, log),
    async request(endpoint, payload, opts = {}) {
      const h = headers();
      if (opts.requestId) h.set(REQUEST_ID, opts.requestId);
      try {
        const reply = await nc.request(subjectOf(prefix, endpoint), JSON.stringify(payload), {
          timeout: opts.timeoutMs ?? options.timeoutMs,
          headers: h,
        });
        return decodeReply(endpoint, reply.string());
      } catch (err) {
        const code = (err as { code?: string; name?: string }).name ?? '';
        if (/NoResponders/i.test(code) || /no responders/i.test(String(err))) {
          throw errors.unavailable(`The ${endpoint.service} service is not available`);
        }
        if (/Timeout/i.test(code) || /timeout/i.test(String(err))) {
          throw errors.timeout(`The ${endpoint.service} service did not answer in time`);
        }
        throw err;
      }
    },
    async serve(spec) {
      const svc = await new Svcm(nc).add({ name: spec.name, version: spec.version, description: spec.description, queue: spec.name });
      const limiter = createLimiter(spec.concurrency);
      for (const bound of spec.handlers) {
        svc.addEndpoint(bound.endpoint.name, {
          subject: subjectOf(prefix, bound.endpoint),
          queue: spec.name,
          handler: (err, msg) => {
            if (err) {
              spec.log.error({ err }, 'nats endpoint error');
              return;
            }
            // The micro API does not await handlers: run under the limiter and never let a rejection escape.
            void limiter
              .run(async () => {
                const reply = await dispatch(bound, msg.string(), msg.headers?.get(REQUEST_ID) || undefined, spec.log);
                const body = JSON.stringify(reply);
                if (reply.ok) msg.respond(body);
                else msg.respondError(reply.error.status, reply.error.detail, body);
              })
              .catch((e: unknown) => spec.log.error({ err: e }, 'reply failed'));
          },
        });
      }
      spec.log.info({ service: spec.name, endpoints: spec.handlers.length }, 'serving on nats');
      return {
        async stop() {
          await svc.stop();
          await limiter.drained();
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
    },
  };
}
