import type { RequestRow } from './rows.js';

/** The device reference a receipt names as the one that resolved its request, if it names one. */
function receiptDevice(receipt: string): string | undefined {
  const payload = receipt.split('.')[1];
  if (!payload) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { device_id?: unknown };
    return typeof claims.device_id === 'string' ? claims.device_id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a request already stands as this device's own `decision`: what a decision sent again by the gateway (its
 * first replica died or went silent after deciding) finds. That resend is answered with the request as it stands,
 * not a 409 for its own earlier success. A device's own second decision on a request (a new call) stays a 409.
 * Without receipts the device cannot be told: the decision alone then answers.
 */
export function decidedAlreadyBy(row: RequestRow, deviceRef: string, decision: 'approved' | 'denied'): boolean {
  if (row.status !== decision) return false;
  if (row.receipt === null) return true;
  return receiptDevice(row.receipt) === deviceRef;
}
