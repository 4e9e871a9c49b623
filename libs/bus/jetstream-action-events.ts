import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type JsMsg,
} from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { ActionEvent, actionEventStreamName, actionEventSubject } from '@agent-auth/contracts';
import type { Logger } from 'pino';
import { createLimiter } from './dispatch.js';
import type { ActionEventStream } from './action-event-stream.js';

const NANOS_PER_MS = 1_000_000;
const HOUR_MS = 3600_000;
const DUPLICATE_WINDOW_MS = 2 * 60_000;
const ACK_WAIT_MS = 30_000;
const REDELIVERY_DELAY_MS = 1_000;

/** How the stream is kept: on `replicas` servers, each event for `maxAgeHours`. */
export interface StreamKeeping {
  replicas: number;
  maxAgeHours: number;
}

/** What the stream is made with: a file stream, de-duplicated by event id, kept as `keeping` says. */
function streamConfig(name: string, subjects: string, keeping: StreamKeeping) {
  return {
    name,
    subjects: [subjects],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    max_age: keeping.maxAgeHours * HOUR_MS * NANOS_PER_MS,
    duplicate_window: DUPLICATE_WINDOW_MS * NANOS_PER_MS,
    num_replicas: keeping.replicas,
  };
}

/**
 * Creates the stream, or brings an existing one to the replication and age asked for (a deployment that grows from
 * one NATS server to a cluster raises NATS_STREAM_REPLICAS and restarts). Consumers keep the stream's replication.
 */
async function ensureStream(
  nc: NatsConnection,
  input: { name: string; subjects: string; keeping: StreamKeeping; log: Logger },
) {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(input.name).catch(() => null);
  const wanted = streamConfig(input.name, input.subjects, input.keeping);
  if (info) {
    if (info.config.num_replicas !== wanted.num_replicas || info.config.max_age !== wanted.max_age) {
      await jsm.streams.update(input.name, {
        ...info.config,
        num_replicas: wanted.num_replicas,
        max_age: wanted.max_age,
      });
      input.log.info({ stream: input.name, ...input.keeping }, 'changed how the action event stream is kept');
    }
    return;
  }
  await jsm.streams.add(wanted).catch(async (err: unknown) => {
    // Another process may have created it in between.
    if (
      !(await jsm.streams.info(input.name).then(
        () => true,
        () => false,
      ))
    )
      throw err;
  });
  input.log.info({ stream: input.name, ...input.keeping }, 'created the action event stream');
}

/**
 * Action events on a JetStream stream (file storage, kept `maxAgeHours`, `replicas` copies on a cluster), one
 * durable pull consumer per consuming service.
 */
export function createJetStreamActionEvents(
  nc: NatsConnection,
  { prefix, log, keeping }: { prefix: string; log: Logger; keeping: StreamKeeping },
): ActionEventStream {
  const js = jetstream(nc);
  const stream = actionEventStreamName(prefix);
  const allSubjects = `${prefix}.action-events.>`;
  let ready: Promise<void> | null = null;

  // On first use; whichever service starts first creates the stream, and a failure is retried next time.
  const ensureStreamOnce = () =>
    (ready ??= ensureStream(nc, { name: stream, subjects: allSubjects, keeping, log }).catch((err: unknown) => {
      ready = null;
      throw err;
    }));

  const parse = (raw: string): ActionEvent | undefined => {
    try {
      const parsed = ActionEvent.safeParse(JSON.parse(raw));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  };

  return {
    async append(events) {
      await ensureStreamOnce();
      const results = await Promise.allSettled(
        events.map((e) =>
          js.publish(actionEventSubject(prefix, e.account_id, e.type), JSON.stringify(e), { msgID: e.id }),
        ),
      );
      const stored = new Set<string>();
      results.forEach((r, i) => {
        if (r.status === 'fulfilled') stored.add(events[i]!.id);
        else log.warn({ err: r.reason, event_id: events[i]!.id }, 'publishing an action event failed');
      });
      return stored;
    },

    async consume(spec) {
      await ensureStreamOnce();
      const jsm = await jetstreamManager(nc);
      await jsm.consumers.add(stream, {
        durable_name: spec.name,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: ACK_WAIT_MS * NANOS_PER_MS,
        max_deliver: -1,
        // The server updates an existing durable consumer's filter in place (its position kept).
        filter_subject: spec.only ? actionEventSubject(prefix, '*', spec.only) : allSubjects,
      });
      const consumer = await js.consumers.get(stream, spec.name);
      const limiter = createLimiter(spec.concurrency);
      const handle = async (m: JsMsg) => {
        const event = parse(m.string());
        if (!event) {
          spec.log.error({ seq: m.seq }, 'dropped a malformed action event');
          m.term('malformed');
          return;
        }
        try {
          await spec.handler(event);
          m.ack();
        } catch (err) {
          spec.log.warn({ err, event_id: event.id }, 'action event handling failed; it will be delivered again');
          m.nak(REDELIVERY_DELAY_MS);
        }
      };
      const messages = await consumer.consume({
        max_messages: spec.concurrency,
        callback: (m) =>
          void limiter
            .run(() => handle(m))
            .catch((err: unknown) => spec.log.error({ err }, 'action event callback failed')),
      });
      spec.log.info({ stream, consumer: spec.name }, 'consuming action events');
      return {
        async stop() {
          await messages.close();
          await limiter.drained();
        },
      };
    },

    async watchResolutions(listener, onGap) {
      const sub = nc.subscribe(`${prefix}.action-events.v1.*.action.resolved`, {
        callback: (err, msg) => {
          if (err) return;
          const event = parse(msg.string());
          if (event) listener(event);
        },
      });
      await nc.flush(); // the server has the subscription: nothing published from here on is missed
      // A core subscription misses what is published while the client reconnects (to another server of a cluster).
      let watching = true;
      void (async () => {
        for await (const s of nc.status()) {
          if (!watching) break;
          if (s.type === 'reconnect') onGap?.();
        }
      })();
      return () => {
        watching = false;
        sub.unsubscribe();
      };
    },

    async follow(accountId, { afterId, type }, listener) {
      await ensureStreamOnce();
      const jsm = await jetstreamManager(nc);
      // Messages up to this sequence were there before: skip them up to afterId. Later ones are always delivered.
      const { state } = await jsm.streams.info(stream);
      const consumer = await js.consumers.get(stream, {
        // One subject as a string: servers before 2.10 take only `filter_subject`.
        filter_subjects: actionEventSubject(prefix, accountId, type),
        deliver_policy: DeliverPolicy.All,
      });
      let passed = false;
      const messages = await consumer.consume({
        callback: (m) => {
          const event = parse(m.string());
          if (!event) return;
          if (passed || m.seq > state.last_seq) {
            passed = true;
            listener(event);
          } else if (event.id === afterId) passed = true;
        },
      });
      return () =>
        void messages.close().catch((err: unknown) => log.warn({ err }, 'closing a replay of action events failed'));
    },

    watch(accountId, listener) {
      // JetStream subjects are ordinary subjects: a core subscription sees each event as it is published.
      const sub = nc.subscribe(actionEventSubject(prefix, accountId), {
        callback: (err, msg) => {
          if (err) return;
          const event = parse(msg.string());
          if (event) listener(event);
        },
      });
      return () => sub.unsubscribe();
    },
  };
}
