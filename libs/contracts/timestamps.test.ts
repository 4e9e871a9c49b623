import { describe, expect, it } from 'vitest';
import { apiTimestamp } from './timestamps.js';

/** What the events' timestamps were normalized with before: the yardstick for every input. */
const byDateParse = (text: string): string | null => {
  const t = Date.parse(text);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
};

describe('apiTimestamp', () => {
  it("rewrites Postgres's JSON form and the API's own to the API's form", () => {
    expect(apiTimestamp('2026-11-27T13:41:08.665123+00:00')).toBe('2026-11-27T13:41:08.665Z');
    expect(apiTimestamp('2026-11-27T13:41:08+00:00')).toBe('2026-11-27T13:41:08.000Z');
    expect(apiTimestamp('2026-11-27T13:41:08.6+00:00')).toBe('2026-11-27T13:41:08.600Z');
    expect(apiTimestamp('2026-11-27T13:41:08.665Z')).toBe('2026-11-27T13:41:08.665Z');
  });

  it('refuses what is not a time', () => {
    for (const text of ['', 'soon', '2026-11-27T13:41:60.000Z', '2026-13-01T00:00:00Z', '2026-11-27T13:41:08+00'])
      expect(apiTimestamp(text)).toBeNull();
  });

  it('gives what Date.parse and toISOString give, for edge cases and other offsets', () => {
    const cases = [
      '2026-02-29T00:00:00.000Z', // not a leap year: Date rolls it over to 1 March
      '2024-02-29T23:59:59.999999+00:00',
      '2026-02-30T00:00:00Z',
      '2026-04-31T12:00:00Z',
      '1900-02-29T00:00:00Z',
      '2000-02-29T00:00:00Z',
      '0000-01-01T00:00:00Z',
      '9999-12-31T23:59:59.9999+00:00',
      '2026-11-27T24:00:00.000Z',
      '2026-11-27T23:60:00.000Z',
      '2026-00-10T00:00:00Z',
      '2026-11-00T00:00:00Z',
      '2026-11-27T13:41:08.Z',
      '2026-11-27T13:41:08,5Z',
      '2026-11-27T13:41:08.665-00:00',
      '2026-11-27T14:41:08.665+01:00',
      '2026-11-27 13:41:08.665+00',
      '2026-11-27T13:41:08',
      '2026-11-27',
      '0999-12-31T23:59:59.5Z',
      '2026-11-27T13:41:08.66+00:00',
    ];
    for (const text of cases) expect(apiTimestamp(text), text).toBe(byDateParse(text));
  });

  it('gives what Date.parse and toISOString give, over many times in both UTC forms', () => {
    for (let i = 0; i < 5_000; i++) {
      const at = new Date(Date.UTC(1970, 0, 1) + Math.floor(Math.random() * 6e12));
      const iso = at.toISOString();
      const micros = `${iso.slice(0, 23)}${String(i % 1000).padStart(3, '0')}+00:00`;
      const seconds = `${iso.slice(0, 19)}+00:00`;
      const tenths = `${iso.slice(0, 21)}+00:00`;
      const hundredths = `${iso.slice(0, 22)}Z`;
      for (const text of [iso, micros, seconds, tenths, hundredths])
        expect(apiTimestamp(text), text).toBe(byDateParse(text));
    }
  });
});
