import { randomUUID } from 'node:crypto';
import type { ActionEventStream } from '@agent-auth/bus';
import type { Sql } from '@agent-auth/db';
import type { Logger } from '@agent-auth/logging';
import { startWakeLoop } from '@agent-auth/lifecycle';
import type { OutboxStore } from '../store/outbox.js';
import { recordOutboxPublished, registerOutboxBacklog } from '@agent-auth/metrics';

const BATCH = 200;
const LEASE_SECONDS = 30;
const RETRY_SECONDS = 1;
const CHANNEL = 'actions_outbox';
/** Other processes' relays are told about this process's commits at most once per this interval. */
const NOTIFY_INTERVAL_MS = 100;

export interface OutboxRelay {
  /** Publishes what is waiting now, and tells the other processes' relays soon (called right after a commit that wrote events). */
  committed(): void;
  stop(): Promise<void>;
}

/**
 * Publishes outbox rows to the action event stream, then deletes them. Woken in-process right after
 * a commit, by LISTEN/NOTIFY when another process commits (unless `listen` is off: the embedded database has one
 * connection, which LISTEN would hold), and by a slow poll as the fallback. The NOTIFY is sent by the committing
 * process outside any request's transaction, at most once per NOTIFY_INTERVAL_MS, naming the sender so that a
 * relay never wakes on its own notification. Rows are claimed with skip locked and
 * a lease, so any number of replicas relay together and a crashed relay's rows are taken over; the stream
 * de-duplicates by event id, so a row published twice is stored once.
 */
export function startOutboxRelay(input: {
  outbox: OutboxStore;
  stream: ActionEventStream;
  sql: Sql;
  listen: boolean;
  pollMs: number;
  log: Logger;
}): OutboxRelay {
  const { outbox, stream, log } = input;
  registerOutboxBacklog(() => outbox.oldestUnpublishedSeconds());
  // Deleting published rows is off the path of the next batch: claimed rows are skipped until their lease ends.
  const marking = new Set<Promise<void>>();
  const inBackground = (work: Promise<void>) => {
    const p: Promise<void> = work
      .catch((err: unknown) =>
        log.error({ err }, 'deleting published outbox rows failed; they will be published again (de-duplicated)'),
      )
      .finally(() => marking.delete(p));
    marking.add(p);
  };

  const sender = randomUUID();
  let notifyTimer: NodeJS.Timeout | null = null;
  const tellOthers = () => {
    if (!input.listen || notifyTimer) return;
    notifyTimer = setTimeout(() => {
      notifyTimer = null;
      if (!loop.stopped)
        input.sql
          .notify(CHANNEL, sender)
          .catch((err: unknown) => log.warn({ err }, 'NOTIFY actions_outbox failed; other relays poll'));
    }, NOTIFY_INTERVAL_MS);
  };

  const relayBatch = async (): Promise<number> => {
    const events = await outbox.claim(BATCH, LEASE_SECONDS);
    if (!events.length) return 0;
    const stored = await stream.append(events);
    recordOutboxPublished(events.filter((e) => stored.has(e.id)).map((e) => new Date(e.occurred_at)));
    inBackground(outbox.deletePublished([...stored]));
    const failed = events.filter((e) => !stored.has(e.id)).map((e) => e.id);
    if (failed.length) {
      log.warn({ count: failed.length }, 'action events not published; offered again shortly');
      inBackground(outbox.release(failed, RETRY_SECONDS));
    }
    return events.length;
  };

  const loop = startWakeLoop({
    pollMs: input.pollMs,
    pass: async () => {
      while ((await relayBatch()) === BATCH && !loop.stopped);
    },
    onError: (err) => log.error({ err }, 'outbox relay pass failed'),
  });

  const listening = input.listen
    ? input.sql
        .listen(CHANNEL, (from) => from !== sender && loop.wake())
        .catch((err: unknown) => {
          log.warn({ err }, 'LISTEN actions_outbox failed; relying on in-process wake-ups and polling');
          return null;
        })
    : Promise.resolve(null);

  return {
    committed() {
      loop.wake();
      tellOthers();
    },
    async stop() {
      if (notifyTimer) clearTimeout(notifyTimer);
      await loop.stop();
      await Promise.all(marking);
      await (await listening)?.unlisten();
    },
  };
}
