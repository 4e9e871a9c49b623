import { describe, expect, it } from 'vitest';
import { auditEventHash, ZERO_HASH } from '@agent-auth/contracts';
import { chainAfter, EMPTY_CHAIN, publicEvent } from './audit-chain.js';

const row = (id: string, detail: Record<string, unknown> = {}) => ({
  id,
  request_id: 'act_1',
  event: 'created',
  actor: 'agent:agt_1',
  detail,
  at: new Date('2026-01-02T03:04:05.678Z'),
});

describe('chainAfter', () => {
  it('starts an empty chain at seq 1 after 64 zeros and links each event to the one before', () => {
    const chained = chainAfter(EMPTY_CHAIN, [row('10'), row('11', { n: 1 })]);
    expect(chained.map((c) => [c.id, c.seq])).toEqual([
      ['10', 1],
      ['11', 2],
    ]);
    expect(chained[0]!.prev_hash).toBe(ZERO_HASH);
    expect(chained[1]!.prev_hash).toBe(chained[0]!.hash);
  });

  it('hashes the public event without its hash, so anyone can recompute it', () => {
    const [c] = chainAfter({ seq: 41, hash: 'a'.repeat(64) }, [row('7', { b: 2, a: 1 })]);
    const { hash, ...rest } = publicEvent(row('7', { a: 1, b: 2 }), c!);
    expect(rest).toEqual({
      seq: 42,
      at: '2026-01-02T03:04:05.678Z',
      request_id: 'act_1',
      type: 'created',
      actor: 'agent:agt_1',
      data: { a: 1, b: 2 },
      prev_hash: 'a'.repeat(64),
    });
    expect(hash).toBe(auditEventHash(rest));
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
  });
});
