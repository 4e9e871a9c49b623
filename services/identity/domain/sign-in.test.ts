import { describe, expect, it } from 'vitest';
import { refusalOfProviderError, verifiedEmailOf } from './sign-in.js';

describe('the sign-in checks', () => {
  it('takes only an email the provider verified', () => {
    expect(verifiedEmailOf({ email: 'dana@example.com', email_verified: true })).toBe('dana@example.com');
    expect(() => verifiedEmailOf({ email: 'dana@example.com', email_verified: 'true' })).toThrow(/not verified/);
    expect(() => verifiedEmailOf({ email: 'dana@example.com' })).toThrow(/not verified/);
    expect(() => verifiedEmailOf({ email_verified: true })).toThrow(/no email address/);
  });

  it("names the ID token's failed claim, the provider's own refusal, and an unreachable provider", () => {
    const claim = (name: string) => ({
      code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED',
      cause: { code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED', cause: { claim: name } },
    });
    expect(refusalOfProviderError(claim('aud')).detail).toContain('audience is not OIDC_CLIENT_ID');
    expect(refusalOfProviderError(claim('iss')).detail).toContain('another provider');
    expect(refusalOfProviderError(claim('nonce')).detail).toContain('nonce differs');
    expect(
      refusalOfProviderError({ code: 'X', cause: { message: 'JWT signature verification failed' } }).detail,
    ).toContain('signature does not verify');
    const denied = refusalOfProviderError({ code: 'OAUTH_RESPONSE_BODY_ERROR', error: 'invalid_grant' });
    expect(denied.status).toBe(401);
    expect(denied.detail).toBe('Sign-in refused: the provider answered invalid_grant');
    const away = refusalOfProviderError({ kind: 'upstream', detail: 'connection refused' });
    expect(away.status).toBe(502);
    expect(away.detail).toContain('connection refused');
  });
});
