import { describe, expect, it } from 'vitest';
import { decodeListCursor, encodeListCursor } from './list-cursor.js';

describe('list cursor', () => {
  it('gives back the position it was made from, to the microsecond', () => {
    const position = { created_at: '2026-11-23T07:15:02.123456Z', id: 'act_3kTq9XbZ0aPq1rS2tU3v' };
    const cursor = encodeListCursor(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeListCursor(cursor)).toEqual(position);
  });

  it('refuses anything it did not make with a 400 naming the cursor', () => {
    const made = (text: string) => Buffer.from(text).toString('base64url');
    for (const bad of [
      '',
      'not base64 at all!',
      made('2026-11-23T07:15:02Z|act_x'),
      made('2026-11-23T07:15:02.123456Z|rul_x'),
      made('2026-11-23T07:15:02.123456Z|act_x|act_y'),
      made("2026-11-23T07:15:02.123456Z|act_x' or 1=1"),
      made('2026-13-45T99:15:02.123456Z|act_x'),
    ]) {
      expect(() => decodeListCursor(bad)).toThrow(
        expect.objectContaining({ status: 400, detail: expect.stringMatching(/^cursor: /) }),
      );
    }
  });
});
