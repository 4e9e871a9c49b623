import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
// The browser modules themselves, run in Node: the same code the device app runs.
import {
  confirmReasons,
  countdown,
  grantOf,
  grantState,
  money,
  parseRoute,
  quorumText,
  relativeTime,
  requestHash,
  riskBadge,
} from './public/format.js';
import { decisionChallenge } from './public/passkeys.js';
import { renderIcon } from './icons.js';

const now = Date.parse('2026-11-23T08:00:00Z');

describe('device app formatting', () => {
  it('counts down to expiry in m:ss (h:mm:ss past an hour), urgent in the last minute, then expired', () => {
    expect(countdown('2026-11-23T08:04:05Z', now)).toEqual({
      text: '4:05',
      spoken: '4 min 5 s',
      urgent: false,
      expired: false,
    });
    expect(countdown('2026-11-23T09:02:03Z', now)).toMatchObject({ text: '1:02:03', spoken: '1 h 2 min' });
    expect(countdown('2026-11-23T08:00:42Z', now)).toMatchObject({ text: '0:42', urgent: true });
    expect(countdown('2026-11-23T07:59:59Z', now)).toMatchObject({ text: 'expired', expired: true });
  });

  it('writes relative times in words', () => {
    expect(relativeTime('2026-11-23T07:59:55Z', now)).toBe('just now');
    expect(relativeTime('2026-11-23T07:58:00Z', now)).toBe('2 minutes ago');
    expect(relativeTime('2026-11-23T05:00:00Z', now)).toBe('3 hours ago');
    expect(relativeTime('2026-11-22T08:00:00Z', now)).toBe('yesterday');
  });

  it('writes amounts in their currency, and risk as a badge', () => {
    expect(money(42.5, 'USD')).toBe('$42.50');
    expect(money(1200, 'EUR')).toBe('€1,200.00');
    expect(money(null, 'USD')).toBeNull();
    expect(riskBadge('critical')).toEqual({ text: 'Critical risk', className: 'badge risk-critical' });
  });

  it('routes the hash: the list, one request by its deep link, the other tabs', () => {
    expect(parseRoute('')).toEqual({ view: 'pending' });
    expect(parseRoute('#/requests')).toEqual({ view: 'pending' });
    expect(parseRoute('#/requests/act_123')).toEqual({ view: 'request', id: 'act_123' });
    expect(parseRoute(requestHash('act_a1'))).toEqual({ view: 'request', id: 'act_a1' });
    expect(parseRoute('#/requests/<script>')).toEqual({ view: 'pending' });
    expect(parseRoute('#/device')).toEqual({ view: 'device' });
    expect(parseRoute('#/nonsense')).toEqual({ view: 'pending' });
  });

  it('makes the passkey challenge of a decision: base64url SHA-256 of the approval message', async () => {
    const { createHash } = await import('node:crypto');
    const expected = createHash('sha256')
      .update('aa-approval-v1\nact_1\napprove\n\n2026-11-23T08:00:00Z')
      .digest('base64url');
    expect(
      await decisionChallenge({
        requestId: 'act_1',
        decision: 'approve',
        contentHash: null,
        timestamp: '2026-11-23T08:00:00Z',
      }),
    ).toBe(expected);
  });
});

describe('device app icon', () => {
  it('is a valid PNG of the asked size', () => {
    for (const size of [192, 512]) {
      const png = renderIcon(size);
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([size, size]);
      const dataLength = png.readUInt32BE(33);
      const raw = inflateSync(png.subarray(41, 41 + dataLength));
      expect(raw.length).toBe(size * (1 + size * 3));
    }
  });
});

describe('device app decisions', () => {
  it('asks for a confirmation before approving a critical or irreversible request, saying why', () => {
    expect(confirmReasons({ risk_level: 'high', reversible: true })).toEqual([]);
    expect(confirmReasons({ risk_level: 'critical', reversible: true })).toEqual(['it is critical risk']);
    expect(confirmReasons({ risk_level: 'low', reversible: false })).toEqual(['it cannot be undone']);
    expect(confirmReasons({ risk_level: 'critical', reversible: false })).toHaveLength(2);
  });

  it('makes the grant of an approve from the form: none for "only this once", blanks left out', () => {
    expect(grantOf({ duration: '', budget: '50', uses: '3' })).toBeNull();
    expect(grantOf({ duration: '3600', budget: '', uses: '' })).toEqual({ duration_seconds: 3600 });
    expect(grantOf({ duration: '900', budget: '25.5', uses: '4' })).toEqual({
      duration_seconds: 900,
      max_amount: 25.5,
      max_uses: 4,
    });
    expect(grantOf({ duration: '900', budget: '0', uses: '1.5' })).toEqual({ duration_seconds: 900 });
  });

  it("says where a grant stands, and a quorum's progress", () => {
    const live = {
      revoked_at: null,
      expires_at: '2026-11-23T09:00:00Z',
      max_uses: 3,
      uses: 1,
      max_amount: 10,
      spent: 4,
    };
    expect(grantState(live, now)).toBe('active');
    expect(grantState({ ...live, uses: 3 }, now)).toBe('used up');
    expect(grantState({ ...live, spent: 10 }, now)).toBe('used up');
    expect(grantState({ ...live, max_uses: null, max_amount: null, uses: 99, spent: 99 }, now)).toBe('active');
    expect(grantState({ ...live, expires_at: '2026-11-23T07:00:00Z' }, now)).toBe('expired');
    expect(grantState({ ...live, revoked_at: '2026-11-23T07:30:00Z' }, now)).toBe('revoked');
    expect(parseRoute('#/grants')).toEqual({ view: 'grants' });
    expect(quorumText(null)).toBeNull();
    expect(quorumText({ required: 2, approvals: [{ device_id: 'd' }] })).toBe('1 of 2 approvals');
  });
});
