import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Sql } from './connect.js';

/** What a table's deleter tells its vacuum schedule (vacuumAfterDeletes). */
export interface VacuumSchedule {
  /** Counts rows just deleted from the table; starts a vacuum in the background once enough have been. */
  deleted(rows: number): void;
  /** Resolves once a vacuum under way has finished (for a clean stop). */
  settled(): Promise<void>;
}

const TABLE_NAME = /^[a-z_]+\.[a-z_]+$/;

/**
 * Vacuums a table after every `everyRows` rows deleted from it. Where no autovacuum runs (the embedded Postgres has
 * none; a server may have it off) the space of deleted rows is never reused, and a table whose rows are inserted
 * and soon deleted (the outbox, idempotency keys) grows by every row it ever held. `skip_locked`: a replica's
 * vacuum under way is not waited for. `truncate false`: cutting the empty pages at the table's end takes an ACCESS
 * EXCLUSIVE lock, and every insert into the table (each create's outbox row) waits behind it (paced creates saw
 * their database wait on `Timeout:VacuumTruncate`); a queue's pages are filled again at once, reused in place.
 * Where an autovacuum runs, this one finds little to do.
 */
export function vacuumAfterDeletes(options: {
  sql: Sql;
  table: string;
  everyRows: number;
  log: Logger;
}): VacuumSchedule {
  const { sql, table, everyRows, log } = options;
  if (!TABLE_NAME.test(table)) throw new Error(`not a schema-qualified table name: ${table}`);
  let since = 0;
  let running: Promise<void> | null = null;
  const vacuum = async () => {
    const started = performance.now();
    const rows = since;
    try {
      await sql.unsafe(`vacuum (skip_locked, truncate false) ${table}`);
      since -= rows;
      log.debug({ table, rows, ms: Math.round(performance.now() - started) }, 'vacuumed');
    } catch (err) {
      log.warn({ err, table }, 'vacuum failed; tried again after the next deletes');
    }
  };
  return {
    deleted(rows) {
      since += rows;
      if (since >= everyRows && !running) running = vacuum().finally(() => (running = null));
    },
    async settled() {
      await running;
    },
  };
}
