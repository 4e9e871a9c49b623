import { hash } from 'node:crypto';
import { createDroppedOnChange } from '@agent-auth/bus';

/** The share of its time-to-live after which a remembered principal in use is verified again in the background. */
const RENEW_AT = 0.75;

/**
 * Remembers verified credentials briefly so argon2 does not run on every request. Keyed by the credential's
 * SHA-256, never the credential itself; revocation evicts at once.
 *
 * One lookup per credential runs at a time: callers that miss while a lookup of the same credential is under way
 * wait for it (a key's first burst of requests, a new gateway or an expired entry, would otherwise verify the key's
 * argon2 hash once per request, each tens of milliseconds of the actions service's CPU). A lookup that a revocation
 * overtook answers the requests that asked for it but is not kept, and requests that come after the revocation never
 * join it: its answer may predate the revocation, and keeping it would accept a revoked key for a whole time-to-live.
 *
 * A busy credential is verified again in the background once its entry has lived RENEW_AT of its time-to-live, so
 * its requests never wait for argon2 (they stood still 13-60 ms behind it once per time-to-live). A renewal that
 * fails leaves the entry to expire at its time: no key is accepted longer after its last verification than before.
 */
export function createAuthCache<P>(options: { ttlMs: number; maxEntries: number }) {
  const principals = createDroppedOnChange<P>({
    ttlMs: options.ttlMs,
    maxEntries: options.maxEntries,
    refreshAfterMs: options.ttlMs * RENEW_AT,
  });
  const keyOf = (credential: string) => hash('sha256', credential, 'base64url');
  return {
    /** The credential's remembered principal, if it is remembered and not expired. */
    get(credential: string): P | undefined {
      return principals.get(keyOf(credential));
    },
    /** The remembered principal, as `get`, renewed in the background by `verify` once it is old (RENEW_AT). */
    getRenewing(credential: string, verify: () => Promise<P>): P | undefined {
      return principals.getRenewing(keyOf(credential), verify);
    },
    /** The credential's principal from the lookup under way, or verified now by `verify` (and kept, if no revocation came meanwhile). */
    lookUp(credential: string, verify: () => Promise<P>): Promise<P> {
      return principals.readOnce(keyOf(credential), verify);
    },
    /** Drops every entry whose principal matches, e.g. a revoked agent, and forgets the lookups under way. */
    evict(matches: (principal: P) => boolean): void {
      principals.dropWhere(matches);
    },
  };
}
