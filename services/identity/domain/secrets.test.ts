import { describe, expect, it } from 'vitest';
import { looksLike, matchesHash, newIdentityId, newSecret, secretHash } from './secrets.js';

describe('the secrets the identity service hands out', () => {
  it('are prefixed, 256 random bits, and stored as a hash that matches only them', () => {
    const token = newSecret('accessToken');
    expect(token).toMatch(/^aat_[A-Za-z0-9_-]{43}$/);
    expect(newSecret('accessToken')).not.toBe(token);
    expect(looksLike('accessToken', token)).toBe(true);
    expect(looksLike('refreshToken', token)).toBe(false);
    const stored = secretHash(token);
    expect(stored).not.toContain(token);
    expect(matchesHash(token, stored)).toBe(true);
    expect(matchesHash(newSecret('accessToken'), stored)).toBe(false);
    expect(newIdentityId('connection')).toMatch(/^ocn_[0-9A-Za-z]{22}$/);
  });
});
