/**
 * Copies a replica keeps of what another part owns (an account's rules, its spend totals, that it has no policy),
 * each dropped when a broadcast says the original changed. A value read before a change but kept after it would
 * outlive the change unheard, so `keep` takes the ticket taken before the read and refuses the value if any change
 * was heard since. Entries expire after `ttlMs`, which bounds how long an event lost on a broken connection can leave
 * a copy stale, and at most `maxEntries` are kept, the one kept longest ago going first.
 */
export function createDroppedOnChange<V>(input: { ttlMs: number; maxEntries: number; now?: () => number }) {
  const now = input.now ?? Date.now;
  const entries = new Map<string, { value: V; at: number }>();
  let changes = 0;
  const fresh = (key: string) => {
    const entry = entries.get(key);
    return entry && now() - entry.at < input.ttlMs ? entry : undefined;
  };
  return {
    /** The kept value, unless it expired. */
    get(key: string): V | undefined {
      return fresh(key)?.value;
    },
    /** When the kept value was read (for a value added to: it expires with the oldest of its parts). */
    keptAt(key: string): number | undefined {
      return fresh(key)?.at;
    },
    /** Taken before reading the original. */
    ticket(): number {
      return changes;
    },
    /** Keeps a value read after `ticket` was taken, unless a change was heard since; `at` defaults to now. */
    keep(key: string, value: V, ticket: number, at = now()): void {
      if (ticket !== changes) return;
      entries.delete(key);
      entries.set(key, { value, at });
      // Maps keep insertion order: the first key is the one kept longest ago.
      if (entries.size > input.maxEntries) entries.delete(entries.keys().next().value!);
    },
    /** The original changed. */
    drop(key: string): void {
      changes++;
      entries.delete(key);
    },
    /** How many are kept (for tests and metrics). */
    get size(): number {
      return entries.size;
    },
  };
}
export type DroppedOnChange<V> = ReturnType<typeof createDroppedOnChange<V>>;
