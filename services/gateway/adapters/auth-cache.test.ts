import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAuthCache } from './auth-cache.js';

describe('auth cache', () => {
  afterEach(() => vi.useRealTimers());

  it('remembers a principal until its time-to-live runs out', () => {
    vi.useFakeTimers();
    const cache = createAuthCache<{ agent_id: string }>({ ttlMs: 1000, maxEntries: 10 });
    cache.set('aa_key', { agent_id: 'agt_1' });
    expect(cache.get('aa_key')).toEqual({ agent_id: 'agt_1' });
    vi.advanceTimersByTime(1001);
    expect(cache.get('aa_key')).toBeUndefined();
  });

  it('evicts revoked principals and bounds its size', () => {
    const cache = createAuthCache<{ agent_id: string }>({ ttlMs: 60_000, maxEntries: 2 });
    cache.set('a', { agent_id: 'agt_a' });
    cache.set('b', { agent_id: 'agt_b' });
    cache.evict((p) => p.agent_id === 'agt_a');
    expect(cache.get('a')).toBeUndefined();
    cache.set('c', { agent_id: 'agt_c' });
    cache.set('d', { agent_id: 'agt_d' });
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('d')).toEqual({ agent_id: 'agt_d' });
  });

  it('caches nothing when the time-to-live is zero', () => {
    const cache = createAuthCache<{ agent_id: string }>({ ttlMs: 0, maxEntries: 2 });
    cache.set('a', { agent_id: 'agt_a' });
    expect(cache.get('a')).toBeUndefined();
  });
});
