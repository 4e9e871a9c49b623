import type { AuthorizationAsked } from '@agent-auth/contracts';
import { type AppError, errors } from '@agent-auth/errors';
import { isS256Challenge } from './pkce.js';

/** The scope a connection is granted: the tools of /mcp. */
export const MCP_SCOPE = 'mcp';

/** Two resource indicators for the same resource: equal URLs, but for a trailing slash. */
export function sameResource(a: string, b: string): boolean {
  if (!URL.canParse(a) || !URL.canParse(b)) return false;
  const strip = (u: string) => new URL(u).href.replace(/\/$/, '');
  return strip(a) === strip(b);
}

/**
 * What is wrong with an authorization request whose client and redirect URI are known (RFC 6749 4.1.2.1: it goes
 * back to the client), or null: the code flow, a PKCE S256 challenge, and this service's own resource if one is named.
 */
export function authorizationProblem(asked: AuthorizationAsked): AppError | null {
  if (asked.response_type !== 'code') return errors.oauthUnsupportedResponseType();
  if (asked.code_challenge === null) return errors.invalidRequest('code_challenge: is required (PKCE with S256)');
  if (asked.code_challenge_method !== 'S256')
    return errors.invalidRequest("code_challenge_method: must be 'S256' (plain is not accepted)");
  if (!isS256Challenge(asked.code_challenge))
    return errors.invalidRequest('code_challenge: must be the 43-character base64url SHA-256 of the verifier');
  if (asked.resource !== null && !sameResource(asked.resource, asked.resource_served))
    return errors.oauthInvalidTarget(asked.resource.slice(0, 200), asked.resource_served);
  return null;
}

/** The redirect URI with the response parameters added to its query (RFC 9207's `iss` among them). */
export function redirectWith(redirectUri: string, params: Record<string, string | null>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.set(name, value);
  return url.href;
}

/** The redirect that answers an authorization request with an error (RFC 6749 4.1.2.1). */
export function errorRedirect(
  input: { redirect_uri: string; state: string | null; issuer: string },
  error: { code: string; detail: string },
): string {
  return redirectWith(input.redirect_uri, {
    error: error.code,
    error_description: error.detail,
    state: input.state,
    iss: input.issuer,
  });
}
