import { describe, expect, it } from 'vitest';
import { idBoundAt, listSegments, pendingIdFloor, segmentOf, segmentsFrom } from './list-segments.js';

const month = (y: number, m: number) => ({
  from: idBoundAt(Date.UTC(y, m - 1, 1)),
  below: idBoundAt(Date.UTC(y, m, 1)),
});
const now = Date.UTC(2026, 4, 15); // mid-May 2026
// Partitions from January to July (two ahead), March dropped by hand: a gap the default partition holds.
const months = [month(2026, 1), month(2026, 2), month(2026, 4), month(2026, 5), month(2026, 6), month(2026, 7)];

describe('the segments a list walks', () => {
  it('are the current month, those ahead (as one range), each earlier month, then every id outside the months', () => {
    expect(listSegments(months, now)).toEqual([
      [month(2026, 5)],
      [{ from: month(2026, 6).from, below: month(2026, 7).below }],
      [month(2026, 4)],
      [month(2026, 2)],
      [month(2026, 1)],
      [
        { from: null, below: month(2026, 1).from },
        { from: month(2026, 2).below, below: month(2026, 4).from },
        { from: month(2026, 7).below, below: null },
      ],
    ]);
    expect(listSegments([], now)).toEqual([]);
  });

  it('place a cursor by its id: a month, outside the months, or for the database to say', () => {
    const segments = listSegments(months, now);
    expect(segmentOf(segments, `${idBoundAt(Date.UTC(2026, 4, 2))}abc`)).toBe(0);
    expect(segmentOf(segments, `${idBoundAt(Date.UTC(2026, 6, 30))}abc`)).toBe(1);
    expect(segmentOf(segments, month(2026, 4).from)).toBe(2);
    expect(segmentOf(segments, `${idBoundAt(Date.UTC(2026, 2, 9))}abc`)).toBe(5); // March: the gap
    expect(segmentOf(segments, `${idBoundAt(Date.UTC(2025, 11, 31))}abc`)).toBe(5);
    expect(segmentOf(segments, 'act_LegacyRandomId0001')).toBeUndefined();
  });

  it('cut to a floor keep only the months from it on, and the ids outside them past it', () => {
    const floor = pendingIdFloor(Date.UTC(2026, 4, 1, 12)); // two days before: April 29th
    expect(floor).toBe(idBoundAt(Date.UTC(2026, 3, 29, 12)));
    expect(segmentsFrom(listSegments(months, now), floor)).toEqual([
      [month(2026, 5)],
      [{ from: month(2026, 6).from, below: month(2026, 7).below }],
      [{ from: floor, below: month(2026, 4).below }],
      [{ from: month(2026, 7).below, below: null }],
    ]);
  });
});
