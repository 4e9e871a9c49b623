import { describe, expect, it } from 'vitest';
import { identityOf, rateLimitHeaders } from './rate-limit.js';

const settings = { RATE_LIMIT_WINDOW_SECONDS: 60, RATE_LIMIT_AGENT: 120, RATE_LIMIT_DEVICE: 60, RATE_LIMIT_IP: 10 };

describe('rate-limit identities and headers', () => {
  it('counts a request against its agent, its device, or else its IP', () => {
    expect(identityOf(settings, { account_id: 'acc_1', agent_id: 'agt_1' }, '1.2.3.4')).toMatchObject({
      key: 'agent:agt_1',
      limit: 120,
    });
    expect(identityOf(settings, { account_id: 'acc_1', device_ref: 'dvc_1' }, '1.2.3.4')).toMatchObject({
      key: 'device:dvc_1',
      limit: 60,
    });
    expect(identityOf(settings, null, '1.2.3.4')).toMatchObject({ key: 'ip:1.2.3.4', limit: 10 });
  });

  it('gives whole seconds rounded up, and Retry-After (at least 1) only when refused', () => {
    expect(rateLimitHeaders(120, { allowed: true, remaining: 119, resetMs: 59_999 })).toEqual({
      'x-ratelimit-limit': '120',
      'x-ratelimit-remaining': '119',
      'x-ratelimit-reset': '60',
    });
    expect(rateLimitHeaders(120, { allowed: true, remaining: 120, resetMs: 0 })['x-ratelimit-reset']).toBe('0');
    expect(rateLimitHeaders(10, { allowed: false, remaining: 0, resetMs: 1_001 })).toEqual({
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': '2',
      'retry-after': '2',
    });
    expect(rateLimitHeaders(10, { allowed: false, remaining: 0, resetMs: 0 })['retry-after']).toBe('1');
  });
});
