// What Postgres did per request in one bench run, from the bench database's own statistics (pg_stat_database):
// transactions committed and rows written. Unlike CPU time, these do not depend on what else the machine runs.
import postgres from 'postgres';
import { out } from './load.js';

interface Counters {
  commits: number;
  inserted: number;
  updated: number;
  deleted: number;
}

async function read(url: string, settleMs: number): Promise<Counters> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    // A busy backend reports its counts about once a second: after a run, wait for the last ones. (At the start the
    // second not reported yet is about what the end leaves out, so the counts are within a few percent.)
    await new Promise((r) => setTimeout(r, settleMs));
    const [row] = await sql<Counters[]>`
      select xact_commit::float8 as commits, tup_inserted::float8 as inserted, tup_updated::float8 as updated,
        tup_deleted::float8 as deleted
      from pg_stat_database where datname = current_database()`;
    return row!;
  } finally {
    await sql.end();
  }
}

/** Counts what the bench database commits and writes between start and stop. */
export function databaseProbe(url: string) {
  let before: Promise<Counters> | undefined;
  return {
    start() {
      before = read(url, 0);
    },
    /** Per request: commits (each statement outside a transaction is one) and rows inserted, updated, deleted. */
    async perRequest(requests: number): Promise<Counters> {
      const [a, b] = [await before!, await read(url, 1500)];
      const per = (k: keyof Counters) => (b[k] - a[k]) / Math.max(1, requests);
      return { commits: per('commits'), inserted: per('inserted'), updated: per('updated'), deleted: per('deleted') };
    },
  };
}

/** Prints one line of database work per request. */
export function printDatabasePerRequest(label: string, c: Counters): void {
  out(
    `postgres per request, ${label}: ${c.commits.toFixed(2)} commits, rows inserted ${c.inserted.toFixed(2)}, updated ${c.updated.toFixed(2)}, deleted ${c.deleted.toFixed(2)}`,
  );
}
