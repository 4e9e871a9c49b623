/**
 * Copies a replica keeps of what another part owns (an account's rules, its spend totals, that it has no policy),
 * each dropped when a broadcast says the original changed. A value read before a change but kept after it would
 * outlive the change unheard, so `keep` takes the ticket taken before the read and refuses the value if any change
 * was heard since. Entries expire after `ttlMs`, which bounds how long an event lost on a broken connection can leave
 * a copy stale, and at most `maxEntries` are kept, the one kept longest ago going first. Callers that miss together
 * can share one read (`readOnce`), which a change makes later callers leave alone. With `refreshAfterMs`, a busy key
 * never expires under its callers: a value that old still answers while one read renews it in the background
 * (`getRenewing`), so no caller waits for the read (for a verified API key, an argon2 hash: every 30 s each busy
 * agent's creates stood still 13-60 ms behind it).
 */
export function createDroppedOnChange<V>(input: {
  ttlMs: number;
  maxEntries: number;
  /** Age at which `getRenewing` starts renewing a value (below `ttlMs`); default: never. */
  refreshAfterMs?: number;
  now?: () => number;
}) {
  const now = input.now ?? Date.now;
  const entries = new Map<string, { value: V; at: number }>();
  const reading = new Map<string, Promise<V>>();
  let changes = 0;
  const fresh = (key: string) => {
    const entry = entries.get(key);
    return entry && now() - entry.at < input.ttlMs ? entry : undefined;
  };
  const keep = (key: string, value: V, ticket: number, at = now()): void => {
    if (ticket !== changes) return;
    entries.delete(key);
    entries.set(key, { value, at });
    // Maps keep insertion order: the first key is the one kept longest ago.
    if (entries.size > input.maxEntries) entries.delete(entries.keys().next().value!);
  };
  const readOnce = (key: string, read: () => Promise<V>): Promise<V> => {
    const under = reading.get(key);
    if (under) return under;
    const ticket = changes;
    const at = now();
    const pending: Promise<V> = read()
      .then((value) => {
        keep(key, value, ticket, at);
        return value;
      })
      .finally(() => {
        if (reading.get(key) === pending) reading.delete(key);
      });
    reading.set(key, pending);
    return pending;
  };
  const refreshAfterMs = input.refreshAfterMs ?? Number.POSITIVE_INFINITY;
  return {
    /** The kept value, unless it expired. */
    get(key: string): V | undefined {
      return fresh(key)?.value;
    },
    /**
     * The kept value, unless it expired; one older than `refreshAfterMs` starts `read` (shared as in `readOnce`) to
     * renew it. A renewal that fails leaves the value to expire at its time, so no value outlives `ttlMs` from its
     * last successful read.
     */
    getRenewing(key: string, read: () => Promise<V>): V | undefined {
      const entry = fresh(key);
      if (entry && now() - entry.at >= refreshAfterMs && !reading.has(key)) readOnce(key, read).catch(() => {});
      return entry?.value;
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
    keep,
    /**
     * The read of the key's original under way, or `read` run now: callers that miss together share it. Its value is
     * kept (from when the read began) unless a change was heard meanwhile; it still answers those that asked for it.
     */
    readOnce,
    /** The original changed. A read of it under way may predate the change: later callers do not join it. */
    drop(key: string): void {
      changes++;
      entries.delete(key);
      reading.delete(key);
    },
    /**
     * The originals of every kept value that `matches` changed. Every read under way is forgotten too: what it will
     * answer is not known yet.
     */
    dropWhere(matches: (value: V) => boolean): void {
      changes++;
      reading.clear();
      for (const [key, entry] of entries) if (matches(entry.value)) entries.delete(key);
    },
    /** How many are kept (for tests and metrics). */
    get size(): number {
      return entries.size;
    },
  };
}
export type DroppedOnChange<V> = ReturnType<typeof createDroppedOnChange<V>>;
