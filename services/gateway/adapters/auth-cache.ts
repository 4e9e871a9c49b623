import { hash } from 'node:crypto';

interface Entry<P> {
  principal: P;
  expiresAt: number;
}

/**
 * Remembers verified credentials briefly so argon2 does not run on every request. Keyed by the credential's
 * SHA-256, never the credential itself; revocation evicts at once.
 *
 * One lookup per credential runs at a time: callers that miss while a lookup of the same credential is under way
 * wait for it (a key's first burst of requests, a new gateway or an expired entry, would otherwise verify the key's
 * argon2 hash once per request, each tens of milliseconds of the actions service's CPU). A lookup that a revocation
 * overtook answers the requests that asked for it but is not kept, and requests that come after the revocation never
 * join it: its answer may predate the revocation, and keeping it would accept a revoked key for a whole time-to-live.
 */
export function createAuthCache<P>(options: { ttlMs: number; maxEntries: number }) {
  const entries = new Map<string, Entry<P>>();
  const inFlight = new Map<string, Promise<P>>();
  let revocations = 0;
  const keyOf = (credential: string) => hash('sha256', credential, 'base64url');

  const cached = (key: string): P | undefined => {
    const entry = entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      entries.delete(key);
      return undefined;
    }
    return entry.principal;
  };
  const keep = (key: string, principal: P): void => {
    if (options.ttlMs <= 0) return;
    if (entries.size >= options.maxEntries) entries.delete(entries.keys().next().value!);
    entries.set(key, { principal, expiresAt: Date.now() + options.ttlMs });
  };
  const lookUp = (key: string, verify: () => Promise<P>): Promise<P> => {
    const ticket = revocations;
    const pending: Promise<P> = verify()
      .then((principal) => {
        if (ticket === revocations) keep(key, principal);
        return principal;
      })
      .finally(() => {
        if (inFlight.get(key) === pending) inFlight.delete(key);
      });
    inFlight.set(key, pending);
    return pending;
  };

  return {
    /** The credential's remembered principal, if it is remembered and not expired. */
    get(credential: string): P | undefined {
      return cached(keyOf(credential));
    },
    /** The credential's principal from the lookup under way, or verified now by `verify` (and kept, if no revocation came meanwhile). */
    lookUp(credential: string, verify: () => Promise<P>): Promise<P> {
      const key = keyOf(credential);
      return inFlight.get(key) ?? lookUp(key, verify);
    },
    /** Drops every entry whose principal matches, e.g. a revoked agent, and forgets the lookups under way. */
    evict(matches: (principal: P) => boolean): void {
      revocations++;
      inFlight.clear();
      for (const [key, entry] of entries) if (matches(entry.principal)) entries.delete(key);
    },
  };
}
