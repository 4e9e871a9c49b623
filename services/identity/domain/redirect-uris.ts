// Redirect URIs: which a client may register, and which requested one matches a registered one.

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
/** A private-use scheme of a native app (RFC 8252 7.1): a reversed domain name, e.g. com.example.app. */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/;

/** Why a redirect URI cannot be registered, or null: https, http on a loopback host, or an app's own scheme. */
export function redirectUriProblem(uri: string): string | null {
  if (!URL.canParse(uri)) return `'${uri.slice(0, 200)}' is not an absolute URI`;
  const url = new URL(uri);
  if (url.hash || uri.includes('#')) return `'${uri.slice(0, 200)}' has a fragment`;
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return null;
  if (PRIVATE_USE_SCHEME.test(url.protocol)) return null;
  return `'${uri.slice(0, 200)}' must be https, http on a loopback address (127.0.0.1, [::1], localhost) or an app's own scheme (com.example.app:/callback)`;
}

/**
 * Whether a requested redirect URI is a registered one: the exact string, except that a loopback http URI may come
 * on any port (RFC 8252 7.3: native apps listen on a port the system gives them); scheme, host, path and query still
 * match exactly.
 */
export function redirectUriMatches(requested: string, registered: string): boolean {
  if (requested === registered) return true;
  if (!URL.canParse(requested) || !URL.canParse(registered)) return false;
  const want = new URL(requested);
  const have = new URL(registered);
  if (want.protocol !== 'http:' || !LOOPBACK_HOSTS.has(want.hostname)) return false;
  return (
    want.protocol === have.protocol &&
    want.hostname === have.hostname &&
    want.pathname === have.pathname &&
    want.search === have.search &&
    !want.hash &&
    !want.username &&
    !want.password
  );
}

/** The redirect URI of an authorization request: the requested one if registered, else the only registered one. */
export function chooseRedirectUri(requested: string | null, registered: readonly string[]): string | null {
  if (requested !== null) return registered.some((r) => redirectUriMatches(requested, r)) ? requested : null;
  return registered.length === 1 ? registered[0]! : null;
}
