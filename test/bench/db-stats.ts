// What Postgres did per request in one bench run, from the bench database's own statistics (pg_stat_database):
// transactions committed and rows written. Unlike CPU time, these do not depend on what else the machine runs.
import { performance } from 'node:perf_hooks';
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

/** What the busy backends of one database were doing, as shares of the samples that found one busy. */
export type WaitShares = Record<string, number>;

// Wait events by what they mean here: the WAL flush every commit waits for (a backend flushing, or queued behind
// the one that is), row or object locks, and the rest.
function waitClass(type: string | null, event: string | null): string {
  if (!type) return 'on CPU';
  if (event === 'WALWrite' || event === 'WALSync' || event === 'WALInsert') return 'the WAL flush';
  if (type === 'Lock') return 'locks';
  return `${type}:${event}`;
}

/**
 * How often the probes beside a paced run sample (waitSampler, commitProbe). They share the two cores with the run
 * they describe: every 20 ms they took about 45 and 65 ms of the machine's CPU per second (pg_stat_activity is
 * about 0.9 ms a sample; a bare commit about 1.3 ms with its flush), and with both the all-in-one's half-rate p99
 * was 9.1-10.2 ms against 7.7-8.1 without.
 */
export const PROBE_INTERVAL_MS = 100;

/**
 * Samples pg_stat_activity every PROBE_INTERVAL_MS while a run goes on: whether the database's busy client backends
 * are on CPU or waiting, and for what. It shows where a request's latency tail comes from below the service.
 */
export function waitSampler(url: string) {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const counts = new Map<string, number>();
  let running = false;
  const sample = async () => {
    const rows = await sql<Array<{ type: string | null; event: string | null }>>`
      select wait_event_type as type, wait_event as event from pg_stat_activity
      where datname = current_database() and backend_type = 'client backend' and state = 'active'
        and pid <> pg_backend_pid()`;
    for (const r of rows) {
      const key = waitClass(r.type, r.event);
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    if (running) setTimeout(() => void sample().catch(() => {}), PROBE_INTERVAL_MS);
  };
  return {
    start(): void {
      counts.clear();
      running = true;
      void sample().catch(() => {});
    },
    async stop(): Promise<WaitShares> {
      running = false;
      await sql.end({ timeout: 1 });
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      return Object.fromEntries([...counts].map(([k, v]) => [k, v / Math.max(1, total)]));
    },
  };
}

/** Latencies of a commit probe: p50, p99 and the longest, in ms. */
export interface CommitFloor {
  p50: number;
  p99: number;
  max: number;
}

/**
 * The machine's floor for a commit: on a connection of its own, every PROBE_INTERVAL_MS, a transaction that writes
 * one WAL record and nothing else (a transactional logical message: no table, and its commit waits for the WAL flush
 * as a create's does; a transaction that only takes an id commits without waiting). A paced run's p99 set by the
 * disk (a flush held up by the kernel writing back dirty pages, say) shows here as a slow probe in the same run.
 */
export function commitProbe(url: string) {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const latencies: number[] = [];
  let running = false;
  let loop: Promise<void> = Promise.resolve();
  const run = async () => {
    while (running) {
      const started = performance.now();
      await sql`select pg_logical_emit_message(true, 'bench-commit-probe', '')`;
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS));
    }
  };
  return {
    async start(): Promise<void> {
      await sql`select 1`; // the connection is open before the first timed probe
      latencies.length = 0;
      running = true;
      loop = run().catch(() => {});
    },
    async stop(): Promise<CommitFloor> {
      running = false;
      await loop;
      await sql.end({ timeout: 1 });
      const sorted = latencies.sort((a, b) => a - b);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
      return { p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? 0 };
    },
  };
}

/** Prints the shares of a wait sample, largest first. */
export function printWaits(label: string, shares: WaitShares): void {
  const parts = Object.entries(shares)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([k, v]) => `${k} ${(100 * v).toFixed(0)} %`);
  out(`postgres backends busy, ${label}: ${parts.join(', ') || 'none seen'}`);
}

/** Checkpoints the server began so far (pg_stat_checkpointer from Postgres 17, pg_stat_bgwriter before), or null. */
export async function checkpointsBegun(url: string): Promise<number | null> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [{ version }] = await sql<
      Array<{ version: number }>
    >`select current_setting('server_version_num')::int as version`;
    const [row] =
      version >= 170000
        ? await sql<Array<{ n: number }>>`select (num_timed + num_requested)::float8 as n from pg_stat_checkpointer`
        : await sql<
            Array<{ n: number }>
          >`select (checkpoints_timed + checkpoints_req)::float8 as n from pg_stat_bgwriter`;
    return row!.n;
  } catch {
    return null; // a server without these views (the embedded one)
  } finally {
    await sql.end();
  }
}

/**
 * Writes out every dirty page now (CHECKPOINT), so that the checkpoint the full-speed rounds' WAL calls for does not
 * start at some point of a paced run and fall on whichever contender is paced then. Quietly skipped where refused.
 */
export async function checkpointNow(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`checkpoint`;
  } catch {
    // not allowed to this role, or not a server that checkpoints: the run goes on as before
  } finally {
    await sql.end();
  }
}
