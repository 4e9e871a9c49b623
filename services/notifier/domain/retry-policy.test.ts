import { describe, expect, it } from 'vitest';
import { loadConfig } from '@agent-auth/config';
import { nextStep, retryHorizonSeconds, withJitter } from './retry-policy.js';

const now = new Date('2030-01-01T00:00:00Z');
const schedule = [5, 300, 1800];

describe('webhook retry policy', () => {
  it('treats any 2xx as delivered', () => {
    for (const status of [200, 201, 204, 299])
      expect(nextStep({ status, error: null }, 1, schedule, now)).toEqual({ outcome: 'delivered' });
  });

  it('stops at 410 Gone, whatever is left of the schedule', () => {
    expect(nextStep({ status: 410, error: null }, 1, schedule, now)).toMatchObject({
      outcome: 'failed',
      reason: expect.stringContaining('410'),
    });
  });

  it('retries other statuses, redirects and missing responses after the scheduled delay of that attempt', () => {
    const mid = () => 0.5; // no jitter
    expect(nextStep({ status: 500, error: null }, 1, schedule, now, mid)).toEqual({
      outcome: 'retrying',
      at: new Date(now.getTime() + 5000),
    });
    expect(nextStep({ status: 302, error: null }, 2, schedule, now, mid)).toEqual({
      outcome: 'retrying',
      at: new Date(now.getTime() + 300_000),
    });
    expect(nextStep({ status: null, error: 'timeout' }, 3, schedule, now, mid)).toEqual({
      outcome: 'retrying',
      at: new Date(now.getTime() + 1_800_000),
    });
  });

  it('gives up once the schedule is used up', () => {
    expect(nextStep({ status: 503, error: null }, 4, schedule, now)).toMatchObject({ outcome: 'failed' });
  });

  it('jitters within ±10 %', () => {
    expect(withJitter(100, () => 0)).toBeCloseTo(90);
    expect(withJitter(100, () => 1)).toBeCloseTo(110);
  });

  it('keeps retrying for more than 24 hours with the default schedule', () => {
    const defaults = loadConfig({}).WEBHOOK_RETRY_SCHEDULE;
    expect(defaults).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(retryHorizonSeconds(defaults) * 0.9).toBeGreaterThan(24 * 3600);
  });

  it('refuses a malformed schedule at start-up', () => {
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '5,soon' })).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
  });
});
