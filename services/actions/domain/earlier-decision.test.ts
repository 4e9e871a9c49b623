import { describe, expect, it } from 'vitest';
import { decidedAlreadyBy } from './earlier-decision.js';
import type { RequestRow } from './rows.js';

const receiptBy = (deviceId: string) =>
  `e30.${Buffer.from(JSON.stringify({ status: 'approved', device_id: deviceId })).toString('base64url')}.c2ln`;
const row = (status: string, receipt: string | null) => ({ status, receipt }) as RequestRow;

describe('a decision sent again', () => {
  it("finds the request decided the same way by the same device, by the receipt's device", () => {
    expect(decidedAlreadyBy(row('approved', receiptBy('dev_a')), 'dev_a', 'approved')).toBe(true);
    expect(decidedAlreadyBy(row('approved', receiptBy('dev_b')), 'dev_a', 'approved')).toBe(false);
    expect(decidedAlreadyBy(row('denied', receiptBy('dev_a')), 'dev_a', 'approved')).toBe(false);
    expect(decidedAlreadyBy(row('pending', null), 'dev_a', 'approved')).toBe(false);
  });

  it('goes by the decision alone without receipts, and never by an unreadable one', () => {
    expect(decidedAlreadyBy(row('denied', null), 'dev_a', 'denied')).toBe(true);
    expect(decidedAlreadyBy(row('denied', 'not-a-token'), 'dev_a', 'denied')).toBe(false);
  });
});
