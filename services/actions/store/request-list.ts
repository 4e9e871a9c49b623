import type { Sql } from '@agent-auth/db';
import type { ListPosition } from '../domain/list-cursor.js';
import {
  type IdRange,
  listSegments,
  type MonthRange,
  pendingIdFloor,
  type Segment,
  segmentOf,
  segmentsFrom,
} from '../domain/list-segments.js';
import type { RequestRow } from '../domain/rows.js';

/**
 * How long the months read from the catalog serve before they are read again: partitions change once a month (and
 * at a conversion), and a list that reads a stale layout is still right, only slower (list-segments.ts).
 */
export const LAYOUT_TTL_MS = 10_000;

/** A partition's bounds as the catalog writes them: FROM ('act_…') TO ('act_…'). */
const FROM_BOUND = String.raw`FROM \('([^']*)'\)`;
const TO_BOUND = String.raw` TO \('([^']*)'\)`;

/** Which of an agent's requests a page reads. */
export interface AgentListFilter {
  limit: number;
  status?: string | null;
  action_type?: string | null;
  /** The last row of the previous page. */
  after?: ListPosition;
}

/** A listed request with its place in the list, to the microsecond (the next cursor). */
export type ListedRequest = RequestRow & { position: string };

/**
 * One agent's requests, newest first, a page at a time, on the requests table whether it is one table or partitioned
 * by month. Partitioned, it reads the newest month's partition first and goes to older ones only while the page is
 * not full (list-segments.ts), one index descent each, where one query over every partition descended each month's
 * index at once; a cursor continues in the month its id lies in.
 */
export function createAgentListWalk(sql: Sql) {
  let layout: { months: MonthRange[]; until: number } | undefined;

  const monthsNow = async (): Promise<MonthRange[]> => {
    if (layout && layout.until > Date.now()) return layout.months;
    const rows = await sql<Array<{ from_id: string | null; below_id: string | null }>>`
      select substring(b from ${FROM_BOUND}) as from_id, substring(b from ${TO_BOUND}) as below_id
      from (select pg_get_expr(c.relpartbound, c.oid) as b from pg_inherits i join pg_class c on c.oid = i.inhrelid
            where i.inhparent = 'actions.requests'::regclass) as parts`;
    // The months: the partition of older ids has no lower bound (MINVALUE), the default one none at all.
    const months = rows.flatMap((r) => (r.from_id && r.below_id ? [{ from: r.from_id, below: r.below_id }] : []));
    layout = { months, until: Date.now() + LAYOUT_TTL_MS };
    return months;
  };

  const rangeSql = (r: IdRange) =>
    r.from === null
      ? sql`id < ${r.below}`
      : r.below === null
        ? sql`id >= ${r.from}`
        : sql`(id >= ${r.from} and id < ${r.below})`;

  // Each filter walks its own index (migration 011) within the partitions the ranges leave. The cursor's time goes in
  // as text: a parameter typed timestamptz would pass through a JavaScript Date and lose its microseconds.
  const read = (
    agentId: string,
    filter: AgentListFilter,
    part: { ranges?: Segment; limit: number; after?: ListPosition },
  ) =>
    sql<ListedRequest[]>`
      select *, to_char(created_at at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as position
      from actions.requests
      where agent_id = ${agentId}
        ${filter.status ? sql`and status = ${filter.status}` : sql``}
        ${filter.action_type ? sql`and action_type = ${filter.action_type}` : sql``}
        ${part.ranges ? sql`and (${part.ranges.map(rangeSql).reduce((a, b) => sql`${a} or ${b}`)})` : sql``}
        ${part.after ? sql`and (created_at, id) < (${part.after.created_at}::text::timestamptz, ${part.after.id})` : sql``}
      order by created_at desc, id desc
      limit ${part.limit}`;

  /** The segment an id lies in, as the database compares ids (an id that does not begin with its time); -1: none. */
  const segmentInDatabase = async (segments: Segment[], id: string): Promise<number> => {
    const ranges = segments.flatMap((segment, i) => segment.map((r) => ({ ...r, i })));
    const [row] = await sql<Array<{ i: number }>>`
      select i from unnest(${ranges.map((r) => r.from)}::text[], ${ranges.map((r) => r.below)}::text[],
        ${ranges.map((r) => r.i)}::int[]) as r(f, b, i)
      where (f is null or ${id} >= f) and (b is null or ${id} < b) limit 1`;
    return row?.i ?? -1;
  };

  return async (agentId: string, filter: AgentListFilter): Promise<ListedRequest[]> => {
    const now = Date.now();
    // A pending request is recent: the list of them reads no older month.
    const floor = filter.status === 'pending' ? pendingIdFloor(now) : undefined;
    const months = await monthsNow();
    if (!months.length) {
      const ranges = floor ? [{ from: floor, below: null }] : undefined;
      return read(agentId, filter, { ranges, limit: filter.limit, after: filter.after });
    }
    const segments = floor ? segmentsFrom(listSegments(months, now), floor) : listSegments(months, now);
    const after = filter.after;
    const start = after ? (segmentOf(segments, after.id) ?? (await segmentInDatabase(segments, after.id))) : 0;
    const rows: ListedRequest[] = [];
    for (let i = start; i >= 0 && i < segments.length && rows.length < filter.limit; i++) {
      const limit = filter.limit - rows.length;
      rows.push(
        ...(await read(agentId, filter, { ranges: segments[i], limit, after: i === start ? after : undefined })),
      );
    }
    return rows;
  };
}
