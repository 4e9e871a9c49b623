import { describe, expect, it } from 'vitest';
import { type CachedPolicy, createPolicyCache } from './policy-cache.js';

const policyWith = (n: number): CachedPolicy => ({
  rules: Array.from({ length: n }, (_, i) => ({ id: `rul_${i}` }) as never),
  limits: [],
});

/** A cache whose loads answer only when released: load n holds n rules. */
function heldLoads() {
  const releases: Array<() => void> = [];
  let loads = 0;
  const cache = createPolicyCache({
    load: async () => {
      const n = ++loads;
      await new Promise<void>((r) => releases.push(r));
      return policyWith(n);
    },
    ttlMs: 60_000,
    maxAccounts: 10,
  });
  return {
    cache,
    releaseAll: () => {
      for (const release of releases.splice(0)) release();
    },
    get loads() {
      return loads;
    },
  };
}

const settled = () => new Promise((r) => setTimeout(r, 5));

describe('policy cache', () => {
  it('loads an account once, until its policy changes', async () => {
    let loads = 0;
    const cache = createPolicyCache({ load: async () => policyWith(++loads), ttlMs: 60_000, maxAccounts: 10 });
    expect((await cache.get('acc_a')).rules).toHaveLength(1);
    expect((await cache.get('acc_a')).rules).toHaveLength(1);
    expect(loads).toBe(1);
    cache.invalidate('acc_a');
    expect((await cache.get('acc_a')).rules).toHaveLength(2);
    expect(loads).toBe(2);
  });

  it('never keeps a copy loaded across a change (a load that started before the invalidation)', async () => {
    const held = heldLoads();
    const slow = held.cache.get('acc_a');
    await settled();
    held.cache.invalidate('acc_a'); // the change commits while the first load is in flight
    held.releaseAll();
    expect((await slow).rules).toHaveLength(1); // used by the decision that asked for it
    const next = held.cache.get('acc_a'); // but not kept
    await settled();
    held.releaseAll();
    expect((await next).rules).toHaveLength(2);
  });

  it('shares one load among concurrent decisions for an account', async () => {
    const held = heldLoads();
    const asked = Array.from({ length: 32 }, () => held.cache.get('acc_a'));
    await settled();
    held.releaseAll();
    const copies = await Promise.all(asked);
    expect(held.loads).toBe(1);
    expect(copies.every((c) => c.rules.length === 1)).toBe(true);
  });

  it('never lets a decision after a change join a load begun before it', async () => {
    const held = heldLoads();
    const before = held.cache.get('acc_a');
    await settled();
    held.cache.invalidate('acc_a'); // the change commits while the first load is in flight
    const after = held.cache.get('acc_a');
    await settled();
    expect(held.loads).toBe(2);
    held.releaseAll();
    expect((await before).rules).toHaveLength(1);
    expect((await after).rules).toHaveLength(2);
    expect((await held.cache.get('acc_a')).rules).toHaveLength(2); // the second load, begun after the change, is kept
    expect(held.loads).toBe(2);
  });

  it('lets every decision waiting on a failed load see the failure, and tries again on the next', async () => {
    let loads = 0;
    const cache = createPolicyCache({
      load: async () => {
        if (++loads === 1) throw new Error('database unavailable');
        return policyWith(loads);
      },
      ttlMs: 60_000,
      maxAccounts: 10,
    });
    const waiting = await Promise.allSettled([cache.get('acc_a'), cache.get('acc_a')]);
    expect(waiting.map((w) => w.status)).toEqual(['rejected', 'rejected']);
    expect((await cache.get('acc_a')).rules).toHaveLength(2);
    expect(loads).toBe(2);
  });

  it('reloads after the time-to-live and keeps at most maxAccounts', async () => {
    let clock = 0;
    let loads = 0;
    const cache = createPolicyCache({
      load: async () => policyWith(++loads),
      ttlMs: 1000,
      maxAccounts: 2,
      now: () => clock,
    });
    await cache.get('acc_a');
    clock = 999;
    await cache.get('acc_a');
    expect(loads).toBe(1);
    clock = 1000;
    await cache.get('acc_a');
    expect(loads).toBe(2);
    await cache.get('acc_b');
    await cache.get('acc_c');
    expect(cache.size).toBe(2);
    await cache.get('acc_a'); // the oldest entry went first
    expect(loads).toBe(5);
  });
});
