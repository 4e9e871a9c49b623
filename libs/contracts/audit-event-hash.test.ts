import { describe, expect, it } from 'vitest';
import { auditEventHash, canonicalSha256 } from './receipts.js';

// The generic form: the RFC 8785 canonical JSON of the event without its hash, whatever its keys' order.
const generic = (event: Parameters<typeof auditEventHash>[0]) =>
  canonicalSha256({ ...event, data: event.data, seq: event.seq });

const pick = <T>(values: T[]): T => values[Math.floor(Math.random() * values.length)]!;
const text = () =>
  pick([
    '',
    'a',
    'agent:agt_1',
    'é',
    '😀',
    '"quoted"',
    'back\\slash',
    'line\nbreak',
    '\u0000\u001f',
    '\u2028',
    'Z'.repeat(40),
  ]);
const value = (depth: number): unknown =>
  depth > 2
    ? pick([null, true, false, 0, -1, 9.99, 1e21, 1e-7, 123456789.125, text()])
    : pick([null, 7, -0.5, text(), [value(depth + 1), value(depth + 1)], data(depth + 1)]);
const data = (depth = 0): Record<string, unknown> =>
  Object.fromEntries(
    Array.from({ length: Math.floor(Math.random() * 5) }, () => [text() + pick(['', 'b', 'A']), value(depth)]),
  );

describe('auditEventHash', () => {
  it('equals the hash of the generic canonical JSON for the edge cases and 5,000 random events', () => {
    const edge = {
      seq: 1,
      at: '2026-11-27T15:00:00.000Z',
      request_id: null,
      type: 'created',
      actor: 'agent:agt_1',
      data: {},
      prev_hash: '0'.repeat(64),
    };
    expect(auditEventHash(edge)).toBe(generic(edge));
    for (let i = 0; i < 5000; i++) {
      const event = {
        seq: Math.floor(Math.random() * 2 ** 40) + 1,
        at: new Date(Math.floor(Math.random() * 4e12)).toISOString(),
        request_id: pick([null, `req_${text()}`]),
        type: text(),
        actor: text(),
        data: data(),
        prev_hash: pick(['0'.repeat(64), 'f'.repeat(64), text()]),
      };
      expect(auditEventHash(event)).toBe(generic(event));
    }
  });

  it('refuses a seq that is not an integer (the chain is numbered by whole places)', () => {
    const event = { seq: 1.5, at: '', request_id: null, type: 't', actor: 'a', data: {}, prev_hash: '' };
    expect(() => auditEventHash(event)).toThrow(/integer/);
  });
});
