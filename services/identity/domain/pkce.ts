import { hash } from 'node:crypto';

// PKCE (RFC 7636) with S256 only, as OAuth 2.1 asks of every client.

/** A verifier: 43 to 128 characters of the unreserved set. */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** An S256 challenge: the base64url SHA-256 of a verifier, 43 characters without padding. */
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export function isS256Challenge(challenge: string): boolean {
  return CHALLENGE.test(challenge);
}

/** Whether the verifier the token request sends is the one whose S256 challenge the authorization request sent. */
export function verifierMatches(verifier: string, challenge: string): boolean {
  return VERIFIER.test(verifier) && hash('sha256', verifier, 'base64url') === challenge;
}
