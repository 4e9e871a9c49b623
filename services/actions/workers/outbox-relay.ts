import type { ActionEventStream } from '@agent-auth/bus';
import type { ActionEventInput } from '@agent-auth/contracts';
import type { Logger } from '@agent-auth/logging';
import type { VacuumSchedule } from '@agent-auth/db';
import { inFlightWork, startWakeLoop } from '@agent-auth/lifecycle';
import type { OutboxStore } from '../store/outbox.js';
import { recordOutboxPublished, registerOutboxBacklog } from '@agent-auth/metrics';

const BATCH = 200;
const LEASE_SECONDS = 30;
const RETRY_SECONDS = 1;
/**
 * Published rows are deleted together, this long after the first of them was stored. A delete statement costs
 * about the same for 10 rows as for 300 (it contends with the creates for the table's newest pages), so under load
 * a longer wait saves Postgres a statement per few creates: at 5 ms the deletes took a third of the creates' own
 * statement time, at 100 ms 4 %. A row waiting here is published already; only the backlog figure sees it.
 */
const DELETE_AFTER_MS = 100;
/**
 * The outbox is vacuumed after this many deleted rows (vacuumAfterDeletes): without it, where no autovacuum runs,
 * the table grew by 31 MB every 41,000 creates; vacuuming a table of a few hundred live rows takes 4-60 ms
 * (measured every 3 s at 2,700 creates/s).
 */
export const OUTBOX_VACUUM_EVERY_ROWS = 20_000;

export interface OutboxRelay {
  /**
   * Publishes the events a statement of this process wrote, right after its commit: the rows were born claimed by
   * their writer, so no claim and no wake-up stand between a decision and the agent learning it.
   */
  committed(events: ActionEventInput[]): void;
  stop(): Promise<void>;
}

/**
 * Publishes outbox rows to the action event stream, then deletes them. The statement that writes a row hands its
 * event back and the writing process publishes it right after the commit (`committed`); the row is born claimed by
 * its writer for WRITER_LEASE_SECONDS. The relay loop is the fallback: polling every `pollMs`, it claims (skip
 * locked, with a lease) whatever no writer published in time (the writer crashed, or the stream was away) and
 * publishes it, so any number of replicas relay together and nothing committed stays unpublished. The stream
 * de-duplicates by event id, so an event published twice is stored once.
 */
export function startOutboxRelay(input: {
  outbox: OutboxStore;
  stream: ActionEventStream;
  pollMs: number;
  log: Logger;
  /** Told of every row deleted, so the outbox is vacuumed where no autovacuum runs (OUTBOX_VACUUM_EVERY_ROWS). */
  vacuum?: VacuumSchedule;
}): OutboxRelay {
  const { outbox, stream, log } = input;
  registerOutboxBacklog(() => outbox.oldestUnpublishedSeconds());
  // Work after a publish (deleting rows, giving rows back) is off the path of the next one; stop() waits for it.
  const background = inFlightWork();
  const inBackground = (work: Promise<void>, failed: string) =>
    background.track(work.catch((err: unknown) => log.error({ err }, failed)));

  const deleted = async (ids: string[]) => {
    await outbox.deletePublished(ids);
    input.vacuum?.deleted(ids.length);
  };

  let toDelete: string[] = [];
  let deleteTimer: NodeJS.Timeout | null = null;
  const flushDeletes = () => {
    deleteTimer = null;
    const ids = toDelete;
    toDelete = [];
    inBackground(deleted(ids), 'deleting published outbox rows failed; they will be published again (de-duplicated)');
  };
  const deleteSoon = (ids: string[]) => {
    if (!ids.length) return;
    toDelete.push(...ids);
    deleteTimer ??= setTimeout(flushDeletes, DELETE_AFTER_MS);
  };

  /** Publishes events whose rows this process holds; deletes the stored ones' rows, gives the others back. */
  const publish = async (events: ActionEventInput[]): Promise<number> => {
    const stored = await stream.append(events);
    recordOutboxPublished(events.filter((e) => stored.has(e.id)).map((e) => new Date(e.occurred_at)));
    deleteSoon([...stored]);
    const failed = events.filter((e) => !stored.has(e.id)).map((e) => e.id);
    if (failed.length) {
      log.warn({ count: failed.length }, 'action events not published; offered again shortly');
      inBackground(outbox.release(failed, RETRY_SECONDS), 'giving outbox rows back failed; their lease ends them');
    }
    return events.length;
  };

  const loop = startWakeLoop({
    pollMs: input.pollMs,
    pass: async () => {
      while ((await publish(await outbox.claim(BATCH, LEASE_SECONDS))) === BATCH && !loop.stopped);
    },
    onError: (err) => log.error({ err }, 'outbox relay pass failed'),
  });

  return {
    committed(events) {
      // Should it fail, the rows stay claimed by this writer until their lease ends; the relay takes them then.
      inBackground(
        publish(events).then(() => undefined),
        'publishing action events after their commit failed; the relay takes them over',
      );
    },
    async stop() {
      await loop.stop();
      await background.settled();
      if (deleteTimer) {
        clearTimeout(deleteTimer);
        flushDeletes();
        await background.settled();
      }
      await input.vacuum?.settled();
    },
  };
}
