import type { ActionEventStream } from '@agent-auth/bus';
import type { Sql } from '@agent-auth/db';
import type { Logger } from '@agent-auth/logging';
import type { OutboxStore } from '../store/outbox.js';

const BATCH = 200;
const LEASE_SECONDS = 30;
const RETRY_SECONDS = 1;
const PURGE_EVERY_MS = 60_000;
const KEEP_PUBLISHED_SECONDS = 3600;

export interface OutboxRelay {
  /** Publishes what is waiting now (called right after a commit that wrote events). */
  wake(): void;
  stop(): Promise<void>;
}

/**
 * Publishes outbox rows to the action event stream, then marks them published. Woken in-process right after
 * a commit, by LISTEN/NOTIFY when another process commits (unless `listen` is off: the embedded database has one
 * connection, which LISTEN would hold), and by a slow poll as the fallback. Rows are claimed with skip locked and
 * a lease, so any number of replicas relay together and a crashed relay's rows are taken over; the stream
 * de-duplicates by event id, so a row published twice is stored once.
 */
export function startOutboxRelay(input: { outbox: OutboxStore; stream: ActionEventStream; sql: Sql; listen: boolean; pollMs: number; log: Logger }): OutboxRelay {
  const { outbox, stream, log } = input;
  let woken = true;
  let stopped = false;
  let nudge: (() => void) | null = null;
  let lastPurge = Date.now();
  // Marking rows published is off the path of the next batch: claimed rows are skipped until their lease ends.
  const marking = new Set<Promise<void>>();
  const inBackground = (work: Promise<void>) => {
    const p: Promise<void> = work.catch((err: unknown) => log.error({ err }, 'marking outbox rows failed; they will be published again (de-duplicated)')).finally(() => marking.delete(p));
    marking.add(p);
  };

  const wake = () => {
    woken = true;
    nudge?.();
  };

  const relayBatch = async (): Promise<number> => {
    const events = await outbox.claim(BATCH, LEASE_SECONDS);
    if (!events.length) return 0;
    const stored = await stream.append(events);
    inBackground(outbox.markPublished([...stored]));
    const failed = events.filter((e) => !stored.has(e.id)).map((e) => e.id);
    if (failed.length) {
      log.warn({ count: failed.length }, 'action events not published; offered again shortly');
      inBackground(outbox.release(failed, RETRY_SECONDS));
    }
    return events.length;
  };

  const pass = async () => {
    try {
      while ((await relayBatch()) === BATCH && !stopped);
      if (Date.now() - lastPurge > PURGE_EVERY_MS) {
        lastPurge = Date.now();
        await outbox.purgePublished(KEEP_PUBLISHED_SECONDS);
      }
    } catch (err) {
      log.error({ err }, 'outbox relay pass failed');
    }
  };

  const sleep = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, input.pollMs);
      nudge = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const listening = input.listen
    ? input.sql.listen('actions_outbox', wake).catch((err: unknown) => {
        log.warn({ err }, 'LISTEN actions_outbox failed; relying on in-process wake-ups and polling');
        return null;
      })
    : Promise.resolve(null);

  const loop = (async () => {
    while (!stopped) {
      if (!woken) await sleep();
      nudge = null;
      woken = false;
      if (!stopped) await pass();
    }
  })();

  return {
    wake,
    async stop() {
      stopped = true;
      nudge?.();
      await loop;
      await Promise.all(marking);
      await (await listening)?.unlisten();
    },
  };
}
