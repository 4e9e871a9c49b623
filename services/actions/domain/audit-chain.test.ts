import { describe, expect, it } from 'vitest';
import { auditEventHash, ZERO_HASH } from '@agent-auth/contracts';
import { chainAfter, chainEach, EMPTY_CHAIN, publicEvent } from './audit-chain.js';

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

describe('chainEach', () => {
  it("chains a round's mixed accounts each after its own head, keeping each account's order", () => {
    const of = (account_id: string, id: string) => ({ ...row(id), account_id });
    const heads = new Map([['acc_a', { seq: '7', hash: 'b'.repeat(64) }]]);
    const chained = chainEach([of('acc_a', '20'), of('acc_b', '21'), of('acc_a', '22'), of('acc_b', '23')], heads);
    const places = chained.map((c) => [c.account_id, c.id, c.seq]);
    expect(places).toEqual([
      ['acc_a', '20', 8],
      ['acc_a', '22', 9],
      ['acc_b', '21', 1],
      ['acc_b', '23', 2],
    ]);
    const [a1, a2, b1, b2] = chained;
    expect([a1!.prev_hash, a2!.prev_hash, b1!.prev_hash, b2!.prev_hash]).toEqual([
      'b'.repeat(64),
      a1!.hash,
      ZERO_HASH,
      b1!.hash,
    ]);
  });
});
