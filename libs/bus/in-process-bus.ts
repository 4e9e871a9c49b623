import { type EndpointDef, eventSubjectOf, subjectOf } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import type { Logger } from 'pino';
import { createLimiter, decodeReply, dispatch, encodedAnswer } from './dispatch.js';
import type { BoundHandler, Bus, RequestOptions } from './types.js';
import { timedRequest } from './request-metrics.js';
import { createInProcessActionEvents } from './in-process-action-events.js';

interface Server {
  bound: BoundHandler;
  run: <T>(task: () => Promise<T>) => Promise<T>;
  log: Logger;
}

/**
 * The all-in-one mode's bus: the same contracts and envelopes as NATS, with messages passed as objects inside the
 * process (no JSON round trip). Senders build messages from the contract's output types; neither side mutates a
 * message it has sent or received.
 */
export function createInProcessBus(options: { prefix?: string; timeoutMs: number }): Bus {
  const prefix = options.prefix ?? 'aa';
  const servers = new Map<string, Server[]>();
  const listeners = new Map<string, Set<(payload: unknown) => void>>();
  let turn = 0;

  const answer = async (endpoint: EndpointDef, payload: unknown, opts: RequestOptions) => {
    const pool = servers.get(subjectOf(prefix, endpoint));
    if (!pool?.length) throw errors.serviceUnavailable(endpoint.service);
    const server = pool[turn++ % pool.length]!;
    return server.run(() => dispatch(server.bound, payload, opts.requestId, server.log));
  };

  return {
    kind: 'in-process',
    actionEvents: createInProcessActionEvents(),
    request: (endpoint, payload, opts = {}) =>
      timedRequest(endpoint, async () => decodeReply(endpoint, await answer(endpoint, payload, opts))),
    requestEncoded: (endpoint, payload, opts = {}) =>
      timedRequest(endpoint, async () => encodedAnswer(endpoint, await answer(endpoint, payload, opts))),
    async serve(spec) {
      const limiter = createLimiter(spec.concurrency);
      const mine: Array<[string, Server]> = spec.handlers.map((bound) => [
        subjectOf(prefix, bound.endpoint),
        { bound, run: limiter.run, log: spec.log },
      ]);
      for (const [subject, server] of mine) servers.set(subject, [...(servers.get(subject) ?? []), server]);
      return {
        async stop() {
          for (const [subject, server] of mine)
            servers.set(
              subject,
              (servers.get(subject) ?? []).filter((s) => s !== server),
            );
          await limiter.drained();
        },
      };
    },
    publish(event, payload) {
      const parsed = event.payload.parse(JSON.parse(JSON.stringify(payload)));
      for (const listener of listeners.get(eventSubjectOf(prefix, event)) ?? []) queueMicrotask(() => listener(parsed));
    },
    subscribe(event, listener) {
      const subject = eventSubjectOf(prefix, event);
      const set = listeners.get(subject) ?? new Set();
      listeners.set(subject, set);
      const wrapped = listener as (payload: unknown) => void;
      set.add(wrapped);
      return () => set.delete(wrapped);
    },
    async close() {
      servers.clear();
      listeners.clear();
    },
  };
}
