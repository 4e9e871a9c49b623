import { createPublicKey, verify, type JsonWebKey, type KeyObject } from 'node:crypto';
import { errors } from '@agent-auth/errors';

/** How far a signed timestamp may be from the server's clock, either way. */
export const SIGNATURE_WINDOW_SECONDS = 300;

const ISO_8601_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const BASE64_ANY = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** Why a public key was refused, or the key in the form it is stored (PEM SPKI). */
export type ParsedPublicKey = { ok: true; pem: string } | { ok: false; reason: string };

/**
 * Accepts an ECDSA P-256 public key as PEM SPKI text or a JWK object and returns it as PEM SPKI, the one form
 * stored. Private keys are refused rather than silently reduced to their public half.
 */
export function parseDevicePublicKey(input: string | Record<string, unknown>): ParsedPublicKey {
  let key: KeyObject;
  try {
    if (typeof input === 'string') {
      if (/PRIVATE KEY/.test(input)) return { ok: false, reason: 'is a private key; send only the public key' };
      if (!/-----BEGIN PUBLIC KEY-----/.test(input))
        return { ok: false, reason: 'must be a PEM SPKI public key (-----BEGIN PUBLIC KEY-----) or a JWK' };
      key = createPublicKey({ key: input, format: 'pem' });
    } else {
      if ('d' in input) return { ok: false, reason: 'is a private JWK (has "d"); send only the public key' };
      key = createPublicKey({ key: input as JsonWebKey, format: 'jwk' });
    }
  } catch {
    return { ok: false, reason: 'is not a valid public key' };
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    return { ok: false, reason: 'must be an ECDSA P-256 key' };
  }
  return { ok: true, pem: key.export({ type: 'spki', format: 'pem' }).toString() };
}

/** The exact text a device signs to approve or deny a request, UTF-8, lines joined by \n. */
export function approvalMessage(input: {
  requestId: string;
  decision: 'approve' | 'deny';
  contentHash: string | null;
  timestamp: string;
}): string {
  return ['aa-approval-v1', input.requestId, input.decision, input.contentHash ?? '', input.timestamp].join('\n');
}

/**
 * The exact text a device signs to approve or deny several requests at once: `aa-approval-batch-v1`,
 * the decision, one line `id content_hash` per request in the order sent (the line ends in the space when there is
 * no hash), then the timestamp, joined by \n.
 */
export function batchApprovalMessage(input: {
  decision: 'approve' | 'deny';
  requests: ReadonlyArray<{ id: string; contentHash: string | null | undefined }>;
  timestamp: string;
}): string {
  return [
    'aa-approval-batch-v1',
    input.decision,
    ...input.requests.map((r) => `${r.id} ${r.contentHash ?? ''}`),
    input.timestamp,
  ].join('\n');
}

/** Why a signed approval or denial was refused; the detail of the 403. */
export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/** Decodes base64 or base64url (padding optional); undefined when the text is neither. */
function decodeSignature(text: string): Buffer | undefined {
  if (!BASE64_ANY.test(text)) return undefined;
  return Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

/** Checks that a timestamp is an ISO 8601 instant with a zone, within the window around now. */
export function checkTimestamp(timestamp: string, nowMs: number): SignatureCheck {
  if (!ISO_8601_INSTANT.test(timestamp))
    return { ok: false, reason: 'timestamp must be an ISO 8601 date-time with a time zone, e.g. 2025-01-31T12:00:00Z' };
  const at = Date.parse(timestamp);
  if (Number.isNaN(at)) return { ok: false, reason: 'timestamp is not a valid date-time' };
  const skew = Math.round((at - nowMs) / 1000);
  if (Math.abs(at - nowMs) > SIGNATURE_WINDOW_SECONDS * 1000) {
    return {
      ok: false,
      reason: `timestamp is ${Math.abs(skew)} s ${skew < 0 ? 'in the past' : 'in the future'}; it must be within ${SIGNATURE_WINDOW_SECONDS} s of the server's time`,
    };
  }
  return { ok: true };
}

/**
 * Verifies a device's ECDSA P-256 / SHA-256 signature over the approval message: raw r‖s (64 bytes, as WebCrypto
 * makes) or DER (as mobile key stores make), in base64 or base64url.
 */
export function verifyApprovalSignature(input: {
  publicKeyPem: string;
  message: string;
  signature: string | null | undefined;
  timestamp: string | null | undefined;
  nowMs: number;
}): SignatureCheck {
  if (!input.signature || !input.timestamp)
    return { ok: false, reason: 'This device has a public key: signature and timestamp are required' };
  const time = checkTimestamp(input.timestamp, input.nowMs);
  if (!time.ok) return time;
  const bytes = decodeSignature(input.signature);
  if (!bytes || bytes.length === 0) return { ok: false, reason: 'signature must be base64 or base64url' };
  const dsaEncoding = bytes.length === 64 ? 'ieee-p1363' : 'der';
  let valid = false;
  try {
    valid = verify('sha256', Buffer.from(input.message, 'utf8'), { key: input.publicKeyPem, dsaEncoding }, bytes);
  } catch {
    valid = false;
  }
  if (!valid)
    return {
      ok: false,
      // The message's first line names its format (aa-approval-v1 or aa-approval-batch-v1).
      reason: `signature does not verify with this device's public key over the approval message (${input.message.split('\n', 1)[0]})`,
    };
  return { ok: true };
}

/** Validates a device public key (400 naming the field) and returns the PEM SPKI form stored; null for none. */
export function normalizePublicKey(key: string | Record<string, unknown> | null | undefined): string | null {
  if (key === null || key === undefined) return null;
  const parsed = parseDevicePublicKey(key);
  if (!parsed.ok) throw errors.invalidPublicKey(parsed.reason);
  return parsed.pem;
}
