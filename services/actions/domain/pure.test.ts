import { describe, expect, it } from 'vitest';
import { fromCents, toCents } from '@agent-auth/contracts';
import { safeEqual } from '@agent-auth/encryption';
import {
  apiKeyId,
  deviceIdHash,
  isWellFormedDeviceId,
  newApiKey,
  newDeviceId,
  newWebhookSecret,
} from './credentials.js';

describe('amounts', () => {
  it('converts dollars to cents rounding half away from zero despite binary fractions', () => {
    expect(toCents(12.5)).toBe(1250);
    expect(toCents(10.005)).toBe(1001);
    expect(toCents(1.005)).toBe(101);
    expect(toCents(0.1 + 0.2)).toBe(30);
    expect(toCents(19.994)).toBe(1999);
    expect(toCents(-2.675)).toBe(-268);
    expect(fromCents(1999)).toBe(19.99);
  });
});

describe('credentials', () => {
  it('makes API keys whose key id can be read back, and rejects anything else', () => {
    const { apiKey, keyId } = newApiKey();
    expect(apiKey).toMatch(/^aa_[0-9A-Za-z]{12}_[0-9A-Za-z]{32}$/);
    expect(apiKeyId(apiKey)).toBe(keyId);
    expect(apiKeyId('aa_short_x')).toBeUndefined();
    expect(apiKeyId(`${apiKey}x`)).toBeUndefined();
  });

  it('makes device ids and stores only their hash', () => {
    const id = newDeviceId();
    expect(isWellFormedDeviceId(id)).toBe(true);
    expect(isWellFormedDeviceId('dev_123')).toBe(false);
    expect(deviceIdHash(id)).toMatch(/^[0-9a-f]{64}$/);
    expect(deviceIdHash(id)).not.toContain(id.slice(4));
  });

  it('makes Standard Webhooks secrets and compares in constant time', () => {
    expect(newWebhookSecret()).toMatch(/^whsec_[A-Za-z0-9+/]{43}$/);
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
  });
});
