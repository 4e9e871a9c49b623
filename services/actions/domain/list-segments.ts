import { idPrefixes, timePrefix } from '@agent-auth/contracts';

/** A range of request ids, from `from` (included) to `below` (excluded); null where it is open. */
export interface IdRange {
  from: string | null;
  below: string | null;
}

/** A month's partition of the requests table: the ids made in that month. */
export interface MonthRange {
  from: string;
  below: string;
}

/**
 * The part of the requests table one query of a list reads: a month's partition (the current month's together with
 * the months made ahead), or the ids outside every month (the partition of older ids and the default one).
 */
export type Segment = IdRange[];

/**
 * A request id that begins with its time. Where it falls among the months' bounds is the same under any collation
 * (digits and lowercase letters sort alike in every one); an id of before ids began with their time may hold capital
 * letters, which some collations sort apart from the code points: the database says where that one lies.
 */
const TIME_SHAPED = /^act_[0-9a-z]{9}/;

/** The smallest id made at `ms`: every id made from then on sorts at or after it. */
export const idBoundAt = (ms: number): string => `${idPrefixes.action}${timePrefix(ms)}`;

/**
 * The order a list walks a partitioned requests table in, newest first: this month's partition, the months made ahead
 * (empty unless a writer's clock ran ahead), each earlier month, then every id outside the months (made before ids
 * began with their time, older than every month). A list reads one segment at a time, each in its own order
 * (creation time, then id), and goes to the next only while its page is not full; none when there are no months (one
 * table). Adjacent months read together are one range: the planner prunes a range more cheaply than ranges or'ed.
 */
export function listSegments(months: MonthRange[], nowMs: number): Segment[] {
  if (!months.length) return [];
  const newestFirst = [...months].sort((a, b) => (a.from < b.from ? 1 : a.from > b.from ? -1 : 0));
  const now = idBoundAt(nowMs);
  const current = newestFirst.filter((m) => m.from <= now && now < m.below);
  const ahead = newestFirst.filter((m) => m.from > now);
  const earlier = newestFirst.filter((m) => m.below <= now);
  return [
    ...(current.length ? [current] : []),
    ...(ahead.length ? [joined(ahead)] : []),
    ...earlier.map((m) => [m]),
    outsideOf(newestFirst),
  ];
}

/** Months as ranges, adjacent ones joined. */
function joined(newestFirst: MonthRange[]): Segment {
  const ranges: IdRange[] = [];
  for (const m of [...newestFirst].reverse()) {
    const last = ranges.at(-1);
    if (last && last.below === m.from) last.below = m.below;
    else ranges.push({ from: m.from, below: m.below });
  }
  return ranges;
}

/** The ids no month holds: before the first, between two that are not adjacent, and after the last. */
function outsideOf(newestFirst: MonthRange[]): Segment {
  const oldestFirst = [...newestFirst].reverse();
  const ranges: IdRange[] = [{ from: null, below: oldestFirst[0]!.from }];
  for (let i = 1; i < oldestFirst.length; i++) {
    const gap = { from: oldestFirst[i - 1]!.below, below: oldestFirst[i]!.from };
    if (gap.from < gap.below) ranges.push(gap);
  }
  ranges.push({ from: oldestFirst.at(-1)!.below, below: null });
  return ranges;
}

const holds = (range: IdRange, id: string) =>
  (range.from === null || id >= range.from) && (range.below === null || id < range.below);

/**
 * The segment a cursor's id lies in: its index, -1 when no segment holds it, undefined when the database must say
 * (an id that does not begin with its time).
 */
export function segmentOf(segments: Segment[], id: string): number | undefined {
  if (!TIME_SHAPED.test(id)) return undefined;
  return segments.findIndex((segment) => segment.some((range) => holds(range, id)));
}

/** The segments cut to the ids from `floor` on (a list that can hold only recent requests reads no older month). */
export function segmentsFrom(segments: Segment[], floor: string): Segment[] {
  return segments
    .map((segment) =>
      segment
        .filter((range) => range.below === null || range.below > floor)
        .map((range) => ({ from: range.from === null || range.from < floor ? floor : range.from, below: range.below })),
    )
    .filter((segment) => segment.length > 0);
}

/**
 * How far back the id of a request still pending can go: a request is pending an hour at most (expires_in_seconds
 * and CIBA's requested_expiry stop at 3600) and is stored at most a day after its id was made (an Idempotency-Key
 * keeps the id it was given for 24 hours); two days leave room for the clocks of the processes that make ids.
 */
const PENDING_ID_WINDOW_MS = 2 * 86_400_000;

/** The smallest id a request pending at `nowMs` can have: pending lists read no month older than it. */
export const pendingIdFloor = (nowMs: number): string => idBoundAt(nowMs - PENDING_ID_WINDOW_MS);
