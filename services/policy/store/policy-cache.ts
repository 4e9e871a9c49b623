import type { AccountPolicy } from './account-policy.js';

/** An account's rules and limits as decisions use them; limits without their spend, which changes with every approval. */
export type CachedPolicy = AccountPolicy;

/**
 * Each policy replica's copy of the rules and limits of the accounts it decides for, so a decision reads no rows
 * unless spend is involved. Every change to an account's rules or limits drops its entry on every replica (the
 * `policy_changed` event; the replica making the change drops its own before answering). A load that overlapped an
 * invalidation is used once but not kept, so a copy from before a change is never cached after it. Entries also
 * expire after `ttlMs`, which bounds how long an event lost on a broken connection can leave a copy stale.
 * Spending limits are enforced from the database, under the account's lock, whatever this copy says.
 */
export function createPolicyCache(input: {
  load: (accountId: string) => Promise<CachedPolicy>;
  ttlMs: number;
  maxAccounts: number;
  now?: () => number;
}) {
  const now = input.now ?? Date.now;
  const entries = new Map<string, { policy: CachedPolicy; loadedAt: number }>();
  let version = 0;
  return {
    /** The account's rules and limits: the cached copy, or loaded (one round trip) and cached. */
    async get(accountId: string): Promise<CachedPolicy> {
      const hit = entries.get(accountId);
      if (hit && now() - hit.loadedAt < input.ttlMs) return hit.policy;
      const started = version;
      const loadedAt = now();
      const policy = await input.load(accountId);
      if (version === started) {
        entries.delete(accountId);
        entries.set(accountId, { policy, loadedAt });
        // Maps keep insertion order: the first key is the entry loaded longest ago.
        if (entries.size > input.maxAccounts) entries.delete(entries.keys().next().value!);
      }
      return policy;
    },
    /** Drops an account's copy (its rules or limits changed). */
    invalidate(accountId: string): void {
      version++;
      entries.delete(accountId);
    },
    /** How many accounts are cached (for tests and metrics). */
    get size(): number {
      return entries.size;
    },
  };
}
export type PolicyCache = ReturnType<typeof createPolicyCache>;
