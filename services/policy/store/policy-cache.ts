import { createDroppedOnChange } from '@agent-auth/bus';
import type { AccountPolicy } from '../domain/account-policy.js';

/** An account's rules and limits as decisions use them; limits without their spend, which changes with every approval. */
export type CachedPolicy = AccountPolicy;

/**
 * Each policy replica's copy of the rules and limits of the accounts it decides for, so a decision reads no rows
 * unless spend is involved. Every change to an account's rules or limits drops its entry on every replica (the
 * `policy_changed` event; the replica making the change drops its own before answering). A load that overlapped an
 * invalidation is used once but not kept, so a copy from before a change is never cached after it. Concurrent
 * decisions for an account without a copy share one load (when a copy expires under load, 32 decisions in flight made
 * 32 loads of the same rules); a decision that comes after an invalidation never joins a load begun before it. Entries also
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
  const copies = createDroppedOnChange<CachedPolicy>({ ttlMs: input.ttlMs, maxEntries: input.maxAccounts, now });
  return {
    /** The account's rules and limits: the cached copy, the load in flight, or loaded (one round trip) and cached. */
    async get(accountId: string): Promise<CachedPolicy> {
      return copies.get(accountId) ?? copies.readOnce(accountId, () => input.load(accountId));
    },
    /** Drops an account's copy (its rules or limits changed); a load under way is not joined after it. */
    invalidate(accountId: string): void {
      copies.drop(accountId);
    },
    /** How many accounts are cached (for tests and metrics). */
    get size(): number {
      return copies.size;
    },
  };
}
export type PolicyCache = ReturnType<typeof createPolicyCache>;
