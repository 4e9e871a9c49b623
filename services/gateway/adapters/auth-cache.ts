import { hash } from 'node:crypto';

interface Entry<P> {
  principal: P;
  expiresAt: number;
}

/**
 * Remembers verified credentials briefly so argon2 does not run on every request. Keyed by the credential's
 * SHA-256, never the credential itself; revocation evicts at once.
 */
export function createAuthCache<P>(options: { ttlMs: number; maxEntries: number }) {
  const entries = new Map<string, Entry<P>>();
  const keyOf = (credential: string) => hash('sha256', credential, 'base64url');
  return {
    get(credential: string): P | undefined {
      const key = keyOf(credential);
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt <= Date.now()) {
        entries.delete(key);
        return undefined;
      }
      return entry.principal;
    },
    set(credential: string, principal: P): void {
      if (options.ttlMs <= 0) return;
      if (entries.size >= options.maxEntries) entries.delete(entries.keys().next().value!);
      entries.set(keyOf(credential), { principal, expiresAt: Date.now() + options.ttlMs });
    },
    /** Drops every entry whose principal matches, e.g. a revoked agent. */
    evict(matches: (principal: P) => boolean): void {
      for (const [key, entry] of entries) if (matches(entry.principal)) entries.delete(key);
    },
  };
}
