import type { Weekday } from '@agent-auth/contracts';

/** The hour of the day (0–23) and the day of the week of a moment, on a time zone's wall clock. */
export interface LocalTime {
  hour: number;
  weekday: Weekday;
}

const WEEKDAYS: Record<string, Weekday> = {
  Mon: 'mon',
  Tue: 'tue',
  Wed: 'wed',
  Thu: 'thu',
  Fri: 'fri',
  Sat: 'sat',
  Sun: 'sun',
};

// One formatter per time zone: building one costs a hundred times more than using it. Accounts name few zones;
// the cap only bounds a hostile variety.
const formatters = new Map<string, Intl.DateTimeFormat>();
const FORMATTERS_MAX = 500;

function formatterOf(timezone: string): Intl.DateTimeFormat {
  let format = formatters.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      hour: 'numeric',
      weekday: 'short',
    });
    if (formatters.size >= FORMATTERS_MAX) formatters.clear();
    formatters.set(timezone, format);
  }
  return format;
}

/** The wall-clock hour and weekday of `at` in `timezone` (an IANA name), daylight saving time included. */
export function localTimeOf(at: Date, timezone: string): LocalTime {
  let hour = 0;
  let weekday: Weekday = 'mon';
  for (const part of formatterOf(timezone).formatToParts(at)) {
    if (part.type === 'hour') hour = Number(part.value) % 24;
    else if (part.type === 'weekday') weekday = WEEKDAYS[part.value] ?? weekday;
  }
  return { hour, weekday };
}

/** A moment on the account's clock, its local time worked out once and only when a condition asks for it. */
export interface Moment {
  at: Date;
  timezone: string;
  local(): LocalTime;
}

export function momentOf(at: Date, timezone: string): Moment {
  let local: LocalTime | undefined;
  return { at, timezone, local: () => (local ??= localTimeOf(at, timezone)) };
}
