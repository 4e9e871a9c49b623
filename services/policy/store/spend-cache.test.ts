import { describe, expect, it } from 'vitest';
import { createSpendCache } from './spend-cache.js';
import type { SpendScope } from './spend.js';

const day = (id: string, start: string): SpendScope => ({
  id,
  start: new Date(start),
  end: new Date(new Date(start).getTime() + 86_400_000),
  agent_id: null,
  action_type: null,
});
const today = day('lim_a', '2026-11-23T00:00:00Z');
const tomorrow = day('lim_a', '2026-11-24T00:00:00Z');
const other = day('lim_b', '2026-11-23T00:00:00Z');

/** A database stand-in that counts reads and answers the totals it is told (the cache's own logic is under test). */
function ledger(initial: number) {
  const state = { spent: initial, reads: 0 };
  const read = async (scopes: readonly SpendScope[]) => {
    state.reads++;
    return new Map(scopes.map((s) => [s.id, state.spent]));
  };
  return { state, read };
}

describe('spend cache', () => {
  it('reads an account’s totals once, until its spend changes', async () => {
    const cache = createSpendCache({ ttlMs: 60_000, maxAccounts: 10 });
    const db = ledger(500);
    expect((await cache.totals('acc_a', [today], db.read)).get('lim_a')).toBe(500);
    expect((await cache.totals('acc_a', [today], db.read)).get('lim_a')).toBe(500);
    expect(db.state.reads).toBe(1);
    db.state.spent = 900;
    cache.invalidate('acc_a');
    expect((await cache.totals('acc_a', [today], db.read)).get('lim_a')).toBe(900);
    expect(db.state.reads).toBe(2);
  });

  it('reads again for a window or a limit it has not read (a new period starts at zero elsewhere)', async () => {
    const cache = createSpendCache({ ttlMs: 60_000, maxAccounts: 10 });
    const db = ledger(100);
    await cache.totals('acc_a', [today], db.read);
    await cache.totals('acc_a', [tomorrow], db.read);
    await cache.totals('acc_a', [today, other], db.read);
    expect(db.state.reads).toBe(3);
    await cache.totals('acc_a', [other], db.read);
    await cache.totals('acc_a', [today, other], db.read);
    expect(db.state.reads).toBe(3);
    // A limit's total is kept for the last window read: the one before it is never asked for again once the
    // period has turned.
    await cache.totals('acc_a', [tomorrow], db.read);
    expect(db.state.reads).toBe(4);
  });

  it('never keeps totals read across a change (a read that started before the invalidation)', async () => {
    const cache = createSpendCache({ ttlMs: 60_000, maxAccounts: 10 });
    let release!: () => void;
    let reads = 0;
    const slow = cache.totals('acc_a', [today], async () => {
      reads++;
      await new Promise<void>((r) => (release = r));
      return new Map([['lim_a', 100]]);
    });
    await new Promise((r) => setTimeout(r, 5));
    cache.invalidate('acc_a'); // an approval commits while the read is in flight
    release();
    expect((await slow).get('lim_a')).toBe(100); // used by the decision that asked for it
    const db = ledger(300);
    expect((await cache.totals('acc_a', [today], db.read)).get('lim_a')).toBe(300); // but not kept
    expect(reads + db.state.reads).toBe(2);
  });

  it('reads again once an entry is older than its time to live (bounds a lost event)', async () => {
    let clock = 0;
    const cache = createSpendCache({ ttlMs: 1_000, maxAccounts: 10, now: () => clock });
    const db = ledger(100);
    await cache.totals('acc_a', [today], db.read);
    clock = 999;
    await cache.totals('acc_a', [today], db.read);
    clock = 1_000;
    await cache.totals('acc_a', [today], db.read);
    expect(db.state.reads).toBe(2);
  });

  it('keeps at most maxAccounts, dropping the one read longest ago', async () => {
    const cache = createSpendCache({ ttlMs: 60_000, maxAccounts: 2 });
    const db = ledger(0);
    for (const account of ['acc_a', 'acc_b', 'acc_c']) await cache.totals(account, [today], db.read);
    await cache.totals('acc_c', [today], db.read);
    await cache.totals('acc_b', [today], db.read);
    expect(db.state.reads).toBe(3);
    await cache.totals('acc_a', [today], db.read);
    expect(db.state.reads).toBe(4);
  });
});
