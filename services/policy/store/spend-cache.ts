import { createDroppedOnChange } from '@agent-auth/bus';
import type { SpendScope } from './spend.js';

const keyOf = (scope: SpendScope) => `${scope.id}|${scope.start.getTime()}`;

/**
 * Each policy replica's copy of the running totals its decisions read for requests no rule approves (a denial by a
 * limit needs the period's spend, and a busy account's requests mostly find it unchanged). Every change to an
 * account's spend drops its entry on every replica (the `spend_changed` event; the replica recording the spend drops
 * its own before answering). A read that overlapped a change is used once but not kept. Entries expire after `ttlMs`,
 * which bounds how long an event lost on a broken connection can leave a total low. Approvals never use this copy:
 * they are checked and recorded against the database under the account's lock.
 */
export function createSpendCache(input: { ttlMs: number; maxAccounts: number; now?: () => number }) {
  const now = input.now ?? Date.now;
  // By account: each scope's total, by limit and window start.
  const copies = createDroppedOnChange<Map<string, number>>({ ttlMs: input.ttlMs, maxEntries: input.maxAccounts, now });
  return {
    /** The spend of each scope by limit id: from the copy when it has every one of them, else read and kept. */
    async totals(
      accountId: string,
      scopes: readonly SpendScope[],
      read: (scopes: readonly SpendScope[]) => Promise<Map<string, number>>,
    ): Promise<Map<string, number>> {
      const hit = copies.get(accountId);
      if (hit) {
        const found = new Map<string, number>();
        for (const scope of scopes) {
          const total = hit.get(keyOf(scope));
          if (total === undefined) break;
          found.set(scope.id, total);
        }
        if (found.size === scopes.length) return found;
      }
      const ticket = copies.ticket();
      const readAt = now();
      const spent = await read(scopes);
      if (copies.ticket() === ticket) {
        // Nothing changed the account's spend during the read, so totals kept before it still hold: added to,
        // expiring with the oldest.
        const kept = copies.get(accountId);
        const totals = new Map(kept ?? []);
        for (const scope of scopes) if (spent.has(scope.id)) totals.set(keyOf(scope), spent.get(scope.id)!);
        copies.keep(accountId, totals, ticket, kept ? copies.keptAt(accountId) : readAt);
      }
      return spent;
    },
    /** Drops an account's totals (its spend changed). */
    invalidate(accountId: string): void {
      copies.drop(accountId);
    },
  };
}
export type SpendCache = ReturnType<typeof createSpendCache>;
