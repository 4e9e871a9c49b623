import { describe, expect, it } from 'vitest';
import { isS256Challenge, verifierMatches } from './pkce.js';

// The example of RFC 7636 appendix B.
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('PKCE S256', () => {
  it('accepts the verifier of the challenge and nothing else', () => {
    expect(isS256Challenge(CHALLENGE)).toBe(true);
    expect(verifierMatches(VERIFIER, CHALLENGE)).toBe(true);
    expect(verifierMatches(`${VERIFIER}x`, CHALLENGE)).toBe(false);
    // plain: the challenge itself as the verifier is refused.
    expect(verifierMatches(CHALLENGE, CHALLENGE)).toBe(false);
  });

  it('refuses verifiers and challenges outside their forms', () => {
    expect(isS256Challenge('short')).toBe(false);
    expect(isS256Challenge(`${CHALLENGE}=`)).toBe(false);
    expect(verifierMatches('too-short', CHALLENGE)).toBe(false);
    expect(verifierMatches('a'.repeat(129), CHALLENGE)).toBe(false);
  });
});
