import { type AppError, errors } from '@agent-auth/errors';

/** How long a sign-in may take at the provider, and how long its ticket waits for the device app. */
export const SIGN_IN_SECONDS = 600;
export const TICKET_SECONDS = 120;

// What each failed check of the ID token means to the person signing in.
const CLAIM_WORDS: Record<string, string> = {
  iss: 'the ID token was issued by another provider than the one configured (OIDC_ISSUER)',
  aud: 'the ID token is meant for another client (its audience is not OIDC_CLIENT_ID)',
  azp: 'the ID token is meant for another client (its authorized party is not OIDC_CLIENT_ID)',
  nonce: 'the ID token does not belong to this sign-in (its nonce differs)',
};

interface LibraryError {
  code?: string;
  error?: string;
  error_description?: string;
  message?: string;
  claim?: string;
  cause?: unknown;
}

/** The error and its causes (openid-client wraps oauth4webapi's, which carries the claim that failed). */
function chainOf(err: unknown): LibraryError[] {
  const chain: LibraryError[] = [];
  for (let e = err; e && typeof e === 'object' && chain.length < 5; e = (e as LibraryError).cause)
    chain.push(e as LibraryError);
  return chain;
}

/**
 * A failure of openid-client as the refusal the app shows: each check of the ID token named in words, the provider's
 * own refusal quoted, a provider that could not be reached a 502.
 */
export function refusalOfProviderError(err: unknown): AppError {
  const chain = chainOf(err);
  const top = chain[0] ?? {};
  const claim = chain.map((e) => e.claim).find((c) => c !== undefined);
  const codes = new Set(chain.map((e) => e.code));
  if (codes.has('OAUTH_JWT_CLAIM_COMPARISON_FAILED') && claim && CLAIM_WORDS[claim])
    return errors.signInRefused(CLAIM_WORDS[claim]);
  if (chain.some((e) => /signature/i.test(e.message ?? '') || e.code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED'))
    return errors.signInRefused("the ID token's signature does not verify with the provider's published keys");
  if (codes.has('OAUTH_JWT_TIMESTAMP_CHECK_FAILED'))
    return errors.signInRefused('the ID token has expired or is not valid yet (check the clocks)');
  if (top.error !== undefined)
    return errors.signInRefused(
      `the provider answered ${top.error}${top.error_description ? ` (${top.error_description})` : ''}`,
    );
  // The outbound client's failures (unreachable, refused address, too slow, too big) carry a kind and a safe detail.
  const outbound = chain.find((e) => (e as { kind?: string }).kind !== undefined) as { detail?: string } | undefined;
  if (outbound || top.code === undefined || codes.has('OAUTH_RESPONSE_IS_NOT_JSON'))
    return errors.identityProviderFailed(outbound?.detail ?? 'it could not be reached or answered wrongly');
  return errors.signInRefused(`the provider's answer did not pass the checks (${top.message ?? top.code})`);
}

/** The ID token's email, if the provider has verified it; else the refusal. */
export function verifiedEmailOf(claims: { email?: unknown; email_verified?: unknown }): string {
  if (typeof claims.email !== 'string' || claims.email.length === 0)
    throw errors.signInRefused('the provider gave no email address (the client needs the email scope)');
  if (claims.email_verified !== true)
    throw errors.signInRefused(`the provider has not verified the email address ${claims.email}`);
  return claims.email;
}
