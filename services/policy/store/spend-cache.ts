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
  const entries = new Map<string, { totals: Map<string, number>; loadedAt: number }>();
  let version = 0;
  return {
    /** The spend of each scope by limit id: from the copy when it has every one of them, else read and kept. */
    async totals(
      accountId: string,
      scopes: readonly SpendScope[],
      read: (scopes: readonly SpendScope[]) => Promise<Map<string, number>>,
    ): Promise<Map<string, number>> {
      const hit = entries.get(accountId);
      if (hit && now() - hit.loadedAt < input.ttlMs && scopes.every((s) => hit.totals.has(keyOf(s)))) {
        return new Map(scopes.map((s) => [s.id, hit.totals.get(keyOf(s))!]));
      }
      const started = version;
      const loadedAt = now();
      const spent = await read(scopes);
      if (version === started) {
        // Nothing changed the account's spend during the read, so totals kept before it still hold: added to.
        const kept = entries.get(accountId);
        const entry =
          kept && now() - kept.loadedAt < input.ttlMs ? kept : { totals: new Map<string, number>(), loadedAt };
        for (const scope of scopes) if (spent.has(scope.id)) entry.totals.set(keyOf(scope), spent.get(scope.id)!);
        entries.delete(accountId);
        entries.set(accountId, entry);
        // Maps keep insertion order: the first key is the entry read longest ago.
        if (entries.size > input.maxAccounts) entries.delete(entries.keys().next().value!);
      }
      return spent;
    },
    /** Drops an account's totals (its spend changed). */
    invalidate(accountId: string): void {
      version++;
      entries.delete(accountId);
    },
  };
}
export type SpendCache = ReturnType<typeof createSpendCache>;
