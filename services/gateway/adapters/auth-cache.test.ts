import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAuthCache } from './auth-cache.js';

type Principal = { agent_id: string };

/** A verification that answers only when released, counting how often it ran. */
function heldVerification(principal: Principal) {
  const releases: Array<() => void> = [];
  let runs = 0;
  return {
    verify: async () => {
      runs++;
      await new Promise<void>((r) => releases.push(r));
      return principal;
    },
    release: () => {
      for (const release of releases.splice(0)) release();
    },
    get runs() {
      return runs;
    },
  };
}

const settled = () => new Promise((r) => setTimeout(r, 5));

describe('auth cache', () => {
  afterEach(() => vi.useRealTimers());

  it('remembers a principal until its time-to-live runs out', async () => {
    vi.useFakeTimers();
    const cache = createAuthCache<Principal>({ ttlMs: 1000, maxEntries: 10 });
    await cache.lookUp('aa_key', async () => ({ agent_id: 'agt_1' }));
    expect(cache.get('aa_key')).toEqual({ agent_id: 'agt_1' });
    vi.advanceTimersByTime(1001);
    expect(cache.get('aa_key')).toBeUndefined();
  });

  it('evicts revoked principals and bounds its size', async () => {
    const cache = createAuthCache<Principal>({ ttlMs: 60_000, maxEntries: 2 });
    const as = (agent_id: string) => async () => ({ agent_id });
    await cache.lookUp('a', as('agt_a'));
    await cache.lookUp('b', as('agt_b'));
    cache.evict((p) => p.agent_id === 'agt_a');
    expect(cache.get('a')).toBeUndefined();
    await cache.lookUp('c', as('agt_c'));
    await cache.lookUp('d', as('agt_d'));
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('d')).toEqual({ agent_id: 'agt_d' });
  });

  it('caches nothing when the time-to-live is zero', async () => {
    const cache = createAuthCache<Principal>({ ttlMs: 0, maxEntries: 2 });
    await cache.lookUp('a', async () => ({ agent_id: 'agt_a' }));
    expect(cache.get('a')).toBeUndefined();
  });

  it('verifies a credential once for a burst of requests that miss together', async () => {
    const cache = createAuthCache<Principal>({ ttlMs: 60_000, maxEntries: 10 });
    const held = heldVerification({ agent_id: 'agt_a' });
    const burst = Array.from({ length: 32 }, () => cache.lookUp('aa_key', held.verify));
    await settled();
    held.release();
    expect(await Promise.all(burst)).toEqual(Array(32).fill({ agent_id: 'agt_a' }));
    expect(held.runs).toBe(1);
  });

  it('never keeps a principal whose lookup a revocation overtook, nor lets later requests join that lookup', async () => {
    const cache = createAuthCache<Principal>({ ttlMs: 60_000, maxEntries: 10 });
    const before = heldVerification({ agent_id: 'agt_a' });
    const asked = cache.lookUp('aa_key', before.verify);
    await settled();
    cache.evict((p) => p.agent_id === 'agt_a'); // the key is revoked while its lookup is under way
    const after = heldVerification({ agent_id: 'agt_a' });
    const askedAfter = cache.lookUp('aa_key', after.verify);
    await settled();
    expect(after.runs).toBe(1); // a lookup of its own, which sees the revocation
    before.release();
    expect(await asked).toEqual({ agent_id: 'agt_a' }); // the request that asked before the revocation
    expect(cache.get('aa_key')).toBeUndefined(); // but not remembered: the next request asks again
    after.release();
    await askedAfter;
  });

  it('lets every request waiting on a failed lookup see the failure, and asks again on the next', async () => {
    const cache = createAuthCache<Principal>({ ttlMs: 60_000, maxEntries: 10 });
    let runs = 0;
    const verify = async () => {
      if (++runs === 1) throw new Error('invalid API key');
      return { agent_id: 'agt_a' };
    };
    const waiting = await Promise.allSettled([cache.lookUp('aa_key', verify), cache.lookUp('aa_key', verify)]);
    expect(waiting.map((w) => w.status)).toEqual(['rejected', 'rejected']);
    expect(await cache.lookUp('aa_key', verify)).toEqual({ agent_id: 'agt_a' });
    expect(runs).toBe(2);
  });

  it('verifies a credential in use again before it expires, without making a request wait for it', async () => {
    vi.useFakeTimers();
    const cache = createAuthCache<Principal>({ ttlMs: 1000, maxEntries: 10 });
    await cache.lookUp('aa_key', async () => ({ agent_id: 'agt_1' }));
    const held = heldVerification({ agent_id: 'agt_1' });
    vi.advanceTimersByTime(800);
    expect(cache.getRenewing('aa_key', held.verify)).toEqual({ agent_id: 'agt_1' }); // answered at once
    expect(held.runs).toBe(1);
    held.release();
    await vi.advanceTimersByTimeAsync(0);
    vi.advanceTimersByTime(500); // 1,300 ms after the first verification, 500 after the renewal
    expect(cache.getRenewing('aa_key', held.verify)).toEqual({ agent_id: 'agt_1' });
    expect(held.runs).toBe(1);
  });

  it('never keeps a renewal that a revocation overtook', async () => {
    vi.useFakeTimers();
    const cache = createAuthCache<Principal>({ ttlMs: 1000, maxEntries: 10 });
    await cache.lookUp('aa_key', async () => ({ agent_id: 'agt_a' }));
    vi.advanceTimersByTime(800);
    const held = heldVerification({ agent_id: 'agt_a' });
    cache.getRenewing('aa_key', held.verify);
    cache.evict((p) => p.agent_id === 'agt_a');
    held.release();
    await vi.advanceTimersByTimeAsync(0);
    expect(cache.get('aa_key')).toBeUndefined();
  });
});
