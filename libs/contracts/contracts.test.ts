import { describe, expect, it } from 'vitest';
import { CreateActionBody, describeZodError, ListActionsQuery, newId, riskRank } from './index.js';

describe('CreateActionBody', () => {
  it('fills the defaults of SPEC 2.1', () => {
    expect(CreateActionBody.parse({ action_type: 'purchase', title: 'Buy' })).toMatchObject({
      risk_level: 'medium',
      reversible: true,
      currency: 'USD',
      expires_in_seconds: 300,
    });
  });

  it('names the offending field, and says "is required" for a missing one', () => {
    const missing = CreateActionBody.safeParse({ title: 'x' });
    expect(describeZodError(missing.error!, 'body', { title: 'x' })).toBe('action_type: is required');
    const long = CreateActionBody.safeParse({ action_type: 'legal', title: 'x'.repeat(201) });
    expect(describeZodError(long.error!)).toMatch(/^title: too big/);
  });

  it('measures metadata in bytes of JSON, not characters', () => {
    const multibyte = { note: 'é'.repeat(4100) }; // 8200 bytes of UTF-8, though only 4100 characters
    expect(CreateActionBody.safeParse({ action_type: 'social', title: 't', metadata: multibyte }).success).toBe(false);
    expect(
      CreateActionBody.safeParse({ action_type: 'social', title: 't', metadata: { note: 'e'.repeat(8000) } }).success,
    ).toBe(true);
  });
});

describe('ListActionsQuery', () => {
  it('coerces the limit from the query string and bounds it to 1..200', () => {
    expect(ListActionsQuery.parse({}).limit).toBe(50);
    expect(ListActionsQuery.parse({ limit: '7' }).limit).toBe(7);
    expect(ListActionsQuery.safeParse({ limit: '201' }).success).toBe(false);
    expect(ListActionsQuery.safeParse({ limit: '1.5' }).success).toBe(false);
  });
});

describe('identifiers and ranks', () => {
  it('makes prefixed ids of base62 characters', () => {
    expect(newId('action')).toMatch(/^act_[0-9A-Za-z]{20}$/);
    expect(new Set(Array.from({ length: 1000 }, () => newId('limit'))).size).toBe(1000);
  });

  it('ranks risk from low to critical', () => {
    expect(['low', 'medium', 'high', 'critical'].map((r) => riskRank(r as never))).toEqual([0, 1, 2, 3]);
  });
});
