import type { Sql } from '@agent-auth/db';

/** Months of partitions kept ahead of today, so a write never finds its month missing. */
const MONTHS_AHEAD = 2;

/** The tables partitioned by month of a key that begins with its time (migrations 060 and 065). */
export type PartitionedTable = 'requests' | 'audit_events' | 'audit_chain';

/**
 * One table's partitions: the online conversion from the unpartitioned table and the months made ahead. Every step
 * runs in SQL functions the migrations made; they serialize on their own.
 */
export function createPartitionStore(sql: Sql, table: PartitionedTable) {
  const parent = `actions.${table}`;
  return {
    table,

    /** True while the conversion waits to be finished (the partitioned twin exists beside the old table). */
    async converting(): Promise<boolean> {
      const [row] = await sql<Array<{ twin: string | null }>>`
        select to_regclass(${`actions.${table}_partitioned`})::text as twin`;
      return row!.twin !== null;
    },

    /** Copies up to `batch` of the rows stored before the conversion began; answers how many it read. */
    async backfill(batch: number): Promise<number> {
      const [row] = await sql<Array<{ n: number }>>`select actions.backfill_partitioned(${table}, ${batch}) as n`;
      return row!.n;
    },

    /**
     * Swaps the partitioned twin in (a short transaction in which writes wait), then gathers its partitions'
     * statistics, which the copy left without (the reads' plans need them); false when there was nothing to do.
     */
    async finishConversion(): Promise<boolean> {
      const [row] = await sql<Array<{ done: boolean }>>`select actions.finish_partitioning(${table}) as done`;
      if (row!.done) await sql.unsafe(`analyze ${parent}`);
      return row!.done;
    },

    /** Makes this month's and the next months' partitions, once the table is partitioned. */
    async addMonthsAhead(): Promise<void> {
      await sql`
        select actions.add_partitions(${table}, ${parent}, (now() at time zone 'utc')::date,
          ((now() at time zone 'utc') + make_interval(months => ${MONTHS_AHEAD}))::date)
        where (select relkind from pg_class where oid = ${parent}::regclass) = 'p'`;
    },
  };
}
export type PartitionStore = ReturnType<typeof createPartitionStore>;

/**
 * The requests table's partitions, and their retention. (The audit trail's months go through its cut,
 * store/audit-cuts.ts, which signs a checkpoint first.)
 */
export function createRequestPartitionStore(sql: Sql) {
  return {
    ...createPartitionStore(sql, 'requests'),

    /** Drops the partitions whose requests were all made more than `days` ago; answers their names. */
    async dropOlderThan(days: number): Promise<string[]> {
      const rows = await sql<Array<{ name: string }>>`
        select actions.drop_request_partitions(now() - make_interval(days => ${days})) as name`;
      return rows.map((r) => r.name);
    },
  };
}
export type RequestPartitionStore = ReturnType<typeof createRequestPartitionStore>;
