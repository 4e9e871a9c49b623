import type { LimitPeriod } from '@agent-auth/contracts';

/** A half-open span of time [start, end). */
export interface Window {
  start: Date;
  end: Date;
}

const DAY_MS = 86_400_000;

/**
 * The UTC period that contains `at`: its calendar day, its ISO week (Monday 00:00 to the next Monday), or its
 * calendar month. Built from Date.UTC so month lengths and leap years come from the calendar, not from arithmetic.
 */
export function periodWindow(period: LimitPeriod, at: Date): Window {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  const d = at.getUTCDate();
  switch (period) {
    case 'daily': {
      const start = Date.UTC(y, m, d);
      return { start: new Date(start), end: new Date(start + DAY_MS) };
    }
    case 'weekly': {
      const sinceMonday = (at.getUTCDay() + 6) % 7; // getUTCDay: Sunday 0 … Saturday 6
      const start = Date.UTC(y, m, d - sinceMonday);
      return { start: new Date(start), end: new Date(start + 7 * DAY_MS) };
    }
    case 'monthly':
      return { start: new Date(Date.UTC(y, m, 1)), end: new Date(Date.UTC(y, m + 1, 1)) };
  }
}

/** The current window of each period: what the spend of one moment is counted in. */
export type PeriodWindows = Record<LimitPeriod, Window>;

// The windows of the day last asked for: every period's window changes only at a UTC midnight, and a busy policy
// service asks thousands of times a day. The answer is shared: its Dates are never to be changed.
let lastWindows: PeriodWindows | undefined;

/** The daily, weekly and monthly windows that contain `at`. */
export function periodWindows(at: Date): PeriodWindows {
  const t = at.getTime();
  if (lastWindows && t >= lastWindows.daily.start.getTime() && t < lastWindows.daily.end.getTime()) return lastWindows;
  lastWindows = {
    daily: periodWindow('daily', at),
    weekly: periodWindow('weekly', at),
    monthly: periodWindow('monthly', at),
  };
  return lastWindows;
}
