import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { randomBase62 } from '@agent-auth/contracts';

/**
 * The secrets this service hands out, each with a prefix that says what it is (and lets a leaked one be found by
 * secret scanners): 256 random bits, so a plain SHA-256 of it is what is stored and looked up.
 */
export const secretPrefixes = {
  accessToken: 'aat_',
  refreshToken: 'aar_',
  code: 'aac_',
  clientSecret: 'aas_',
  // Sign-in with the company's OpenID provider: the state sent there, and the one-time ticket the device app redeems
  // for its device id (the browser's binding cookie, `asb_`, is the gateway's; only its hash is kept here).
  signInState: 'ass_',
  signInTicket: 'ast_',
} as const;
export type SecretKind = keyof typeof secretPrefixes;

/** The public ids of this service: OAuth clients, authorization requests and connections (granted consents). */
export const idPrefixes = { client: 'oac_', request: 'oar_', connection: 'ocn_' } as const;

export function newSecret(kind: SecretKind): string {
  return secretPrefixes[kind] + randomBytes(32).toString('base64url');
}

export function newIdentityId(kind: keyof typeof idPrefixes): string {
  return idPrefixes[kind] + randomBase62(22);
}

/** What is stored of a secret: its SHA-256, base64url. */
export function secretHash(secret: string): string {
  return hash('sha256', secret, 'base64url');
}

/** Whether a presented secret is the one whose hash is stored, in constant time. */
export function matchesHash(secret: string, storedHash: string): boolean {
  const given = Buffer.from(secretHash(secret));
  const stored = Buffer.from(storedHash);
  return given.length === stored.length && timingSafeEqual(given, stored);
}

/** Whether a string could be a secret of that kind at all (so a lookup of anything else is skipped). */
export function looksLike(kind: SecretKind, value: string): boolean {
  return value.startsWith(secretPrefixes[kind]) && value.length === secretPrefixes[kind].length + 43;
}
