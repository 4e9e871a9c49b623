import { createDroppedOnChange } from '@agent-auth/bus';
import type { SpendScope } from './spend.js';

/** A limit's total in one window, known by the window's start (a new window's read replaces it). */
interface KeptTotal {
  start: number;
  total: number;
}

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
  // By account: each limit's total in the window it was read for. Keyed by limit id alone, with the window's start
  // beside the total: a key built of both, as a string, cost more per decision than the rest of the lookup.
  const copies = createDroppedOnChange<Map<string, KeptTotal>>({
    ttlMs: input.ttlMs,
    maxEntries: input.maxAccounts,
    now,
  });
  /** The spend of each scope by limit id, if the copy has every one of them in its current window. */
  const kept = (accountId: string, scopes: readonly SpendScope[]): Map<string, number> | undefined => {
    const hit = copies.get(accountId);
    if (!hit) return undefined;
    const found = new Map<string, number>();
    for (const scope of scopes) {
      const total = hit.get(scope.id);
      if (total?.start !== scope.start.getTime()) return undefined;
      found.set(scope.id, total.total);
    }
    return found;
  };
  return {
    kept,
    /** The spend of each scope by limit id: from the copy when it has every one of them, else read and kept. */
    async totals(
      accountId: string,
      scopes: readonly SpendScope[],
      read: (scopes: readonly SpendScope[]) => Promise<Map<string, number>>,
    ): Promise<Map<string, number>> {
      const found = kept(accountId, scopes);
      if (found) return found;
      const ticket = copies.ticket();
      const readAt = now();
      const spent = await read(scopes);
      if (copies.ticket() === ticket) {
        // Nothing changed the account's spend during the read, so totals kept before it still hold: added to,
        // expiring with the oldest.
        const kept = copies.get(accountId);
        const totals = new Map(kept ?? []);
        for (const scope of scopes)
          if (spent.has(scope.id)) totals.set(scope.id, { start: scope.start.getTime(), total: spent.get(scope.id)! });
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
