import { describe, expect, it } from 'vitest';
import { periodWindow, periodWindows } from './period-windows.js';

const at = (iso: string) => new Date(iso);
const span = (period: 'daily' | 'weekly' | 'monthly', iso: string) => {
  const w = periodWindow(period, at(iso));
  return [w.start.toISOString(), w.end.toISOString()];
};

describe('periodWindow daily', () => {
  it('is the UTC calendar day, start inclusive, end exclusive', () => {
    expect(span('daily', '2025-03-14T12:34:56.789Z')).toEqual(['2025-03-14T00:00:00.000Z', '2025-03-15T00:00:00.000Z']);
    expect(span('daily', '2025-03-14T00:00:00.000Z')).toEqual(['2025-03-14T00:00:00.000Z', '2025-03-15T00:00:00.000Z']);
    expect(span('daily', '2025-03-14T23:59:59.999Z')).toEqual(['2025-03-14T00:00:00.000Z', '2025-03-15T00:00:00.000Z']);
  });

  it('follows UTC, not the local offset of the timestamp', () => {
    expect(span('daily', '2025-03-14T23:30:00-05:00')).toEqual([
      '2025-03-15T00:00:00.000Z',
      '2025-03-16T00:00:00.000Z',
    ]);
  });

  it('crosses month and year ends, and leap days', () => {
    expect(span('daily', '2024-12-31T18:00:00Z')).toEqual(['2024-12-31T00:00:00.000Z', '2025-01-01T00:00:00.000Z']);
    expect(span('daily', '2024-02-28T10:00:00Z')).toEqual(['2024-02-28T00:00:00.000Z', '2024-02-29T00:00:00.000Z']);
    expect(span('daily', '2024-02-29T10:00:00Z')).toEqual(['2024-02-29T00:00:00.000Z', '2024-03-01T00:00:00.000Z']);
    expect(span('daily', '2025-02-28T10:00:00Z')).toEqual(['2025-02-28T00:00:00.000Z', '2025-03-01T00:00:00.000Z']);
  });
});

describe('periodWindow weekly (ISO week, from Monday)', () => {
  it('starts on the Monday of the week for every day of it', () => {
    // 2025-03-10 is a Monday.
    for (let day = 10; day <= 16; day++) {
      expect(span('weekly', `2025-03-${day}T12:00:00Z`)).toEqual([
        '2025-03-10T00:00:00.000Z',
        '2025-03-17T00:00:00.000Z',
      ]);
    }
  });

  it('puts Sunday 23:59:59.999 in the old week and Monday 00:00 in the new one', () => {
    expect(span('weekly', '2025-03-16T23:59:59.999Z')[1]).toBe('2025-03-17T00:00:00.000Z');
    expect(span('weekly', '2025-03-17T00:00:00.000Z')[0]).toBe('2025-03-17T00:00:00.000Z');
  });

  it('spans month and year ends', () => {
    // 2024-12-30 is the Monday of ISO week 2025-W01.
    expect(span('weekly', '2025-01-01T08:00:00Z')).toEqual(['2024-12-30T00:00:00.000Z', '2025-01-06T00:00:00.000Z']);
    expect(span('weekly', '2025-01-05T23:00:00Z')).toEqual(['2024-12-30T00:00:00.000Z', '2025-01-06T00:00:00.000Z']);
    // 2021-01-03 (Sunday) belongs to the week that began on Monday 2020-12-28.
    expect(span('weekly', '2021-01-03T12:00:00Z')).toEqual(['2020-12-28T00:00:00.000Z', '2021-01-04T00:00:00.000Z']);
  });

  it('counts a leap day like any other day', () => {
    // 2024-02-29 is a Thursday; its week runs Monday 26 February to Monday 4 March.
    expect(span('weekly', '2024-02-29T12:00:00Z')).toEqual(['2024-02-26T00:00:00.000Z', '2024-03-04T00:00:00.000Z']);
    expect(span('weekly', '2023-03-01T12:00:00Z')).toEqual(['2023-02-27T00:00:00.000Z', '2023-03-06T00:00:00.000Z']);
  });
});

describe('periodWindow monthly', () => {
  it('is the calendar month', () => {
    expect(span('monthly', '2025-03-14T12:00:00Z')).toEqual(['2025-03-01T00:00:00.000Z', '2025-04-01T00:00:00.000Z']);
    expect(span('monthly', '2025-03-01T00:00:00.000Z')[0]).toBe('2025-03-01T00:00:00.000Z');
    expect(span('monthly', '2025-03-31T23:59:59.999Z')[1]).toBe('2025-04-01T00:00:00.000Z');
    expect(span('monthly', '2025-04-30T12:00:00Z')).toEqual(['2025-04-01T00:00:00.000Z', '2025-05-01T00:00:00.000Z']);
  });

  it('rolls over the year in December', () => {
    expect(span('monthly', '2024-12-31T23:59:59.999Z')).toEqual([
      '2024-12-01T00:00:00.000Z',
      '2025-01-01T00:00:00.000Z',
    ]);
    expect(span('monthly', '2025-01-01T00:00:00.000Z')).toEqual([
      '2025-01-01T00:00:00.000Z',
      '2025-02-01T00:00:00.000Z',
    ]);
  });

  it('gives February 29 days in leap years (including 2000) and 28 otherwise (including 1900 and 2100)', () => {
    const days = (iso: string) => {
      const w = periodWindow('monthly', at(iso));
      return (w.end.getTime() - w.start.getTime()) / 86_400_000;
    };
    expect(days('2024-02-29T12:00:00Z')).toBe(29);
    expect(days('2000-02-10T12:00:00Z')).toBe(29);
    expect(days('2025-02-10T12:00:00Z')).toBe(28);
    expect(days('1900-02-10T12:00:00Z')).toBe(28);
    expect(days('2100-02-10T12:00:00Z')).toBe(28);
    expect(span('monthly', '2024-02-29T23:59:59.999Z')[1]).toBe('2024-03-01T00:00:00.000Z');
  });
});

describe('periodWindows', () => {
  const spans = (iso: string) =>
    Object.fromEntries(
      Object.entries(periodWindows(at(iso))).map(([p, w]) => [p, [w.start.toISOString(), w.end.toISOString()]]),
    );

  it('is each period window of the moment, whether asked the same day again or another day, earlier or later', () => {
    for (const iso of [
      '2025-03-14T12:00:00.000Z',
      '2025-03-14T23:59:59.999Z', // the same day: the windows kept
      '2025-03-15T00:00:00.000Z', // the next day
      '2025-02-28T08:00:00.000Z', // back in time, another month
      '2025-03-14T00:00:00.000Z',
    ]) {
      expect(spans(iso)).toEqual({
        daily: span('daily', iso),
        weekly: span('weekly', iso),
        monthly: span('monthly', iso),
      });
    }
  });
});
