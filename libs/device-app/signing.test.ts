import { createPublicKey, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
// The browser module itself, run on Node's WebCrypto: the same code the device app runs.
import {
  approvalMessage,
  base64url,
  batchApprovalMessage,
  deviceTag,
  generateDeviceKey,
  publicJwk,
  signBatch,
  signDecision,
} from './public/signing.js';
import { batchChallenge } from './public/passkeys.js';

describe('device app signing', () => {
  it('builds the five-line approval message, with an empty line for no content hash', () => {
    expect(
      approvalMessage({
        requestId: 'act_1',
        decision: 'approve',
        contentHash: null,
        timestamp: '2026-01-01T00:00:00Z',
      }),
    ).toBe('aa-approval-v1\nact_1\napprove\n\n2026-01-01T00:00:00Z');
    expect(approvalMessage({ requestId: 'act_1', decision: 'deny', contentHash: 'ab12', timestamp: 'T' })).toBe(
      'aa-approval-v1\nact_1\ndeny\nab12\nT',
    );
  });

  it('signs with a non-extractable key; the raw r‖s signature verifies with the exported public JWK', async () => {
    const pair = await generateDeviceKey();
    expect(pair.privateKey.extractable).toBe(false);
    await expect(crypto.subtle.exportKey('jwk', pair.privateKey)).rejects.toThrow();
    const jwk = await publicJwk(pair.publicKey);
    expect(Object.keys(jwk).sort()).toEqual(['crv', 'kty', 'x', 'y']);
    const now = new Date('2026-11-21T10:11:12.345Z');
    const { signature, timestamp } = await signDecision(pair.privateKey, {
      requestId: 'act_9',
      decision: 'approve',
      contentHash: 'cafe',
      now,
    });
    expect(timestamp).toBe('2026-11-21T10:11:12Z');
    expect(signature).toMatch(/^[A-Za-z0-9_-]{86}$/); // 64 bytes, base64url, unpadded
    const key = createPublicKey({ key: jwk, format: 'jwk' });
    const message = Buffer.from(
      approvalMessage({ requestId: 'act_9', decision: 'approve', contentHash: 'cafe', timestamp }),
    );
    const raw = Buffer.from(signature, 'base64url');
    expect(verify('sha256', message, { key, dsaEncoding: 'ieee-p1363' }, raw)).toBe(true);
    expect(
      verify(
        'sha256',
        Buffer.from(approvalMessage({ requestId: 'act_9', decision: 'deny', contentHash: 'cafe', timestamp })),
        { key, dsaEncoding: 'ieee-p1363' },
        raw,
      ),
    ).toBe(false);
  });

  it('encodes base64url without padding and names a device by a stable hash, not its id', async () => {
    expect(base64url(new Uint8Array([0xfb, 0xff]))).toBe('-_8');
    const tag = await deviceTag('dev_secret');
    expect(tag).toMatch(/^[0-9a-f]{16}$/);
    expect(await deviceTag('dev_secret')).toBe(tag);
    expect(tag).not.toContain('secret');
  });

  it('builds the batch message (lines "id content_hash", ending in the space when none) and signs it', async () => {
    const requests = [
      { id: 'act_b', content_hash: null },
      { id: 'act_a', content_hash: 'cafe' },
    ];
    expect(batchApprovalMessage({ decision: 'approve', requests, timestamp: 'T' })).toBe(
      'aa-approval-batch-v1\napprove\nact_b \nact_a cafe\nT',
    );
    const pair = await generateDeviceKey();
    const now = new Date('2026-11-21T10:11:12.345Z');
    const { signature, timestamp } = await signBatch(pair.privateKey, { decision: 'deny', requests, now });
    expect(timestamp).toBe('2026-11-21T10:11:12Z');
    const key = createPublicKey({ key: await publicJwk(pair.publicKey), format: 'jwk' });
    const message = Buffer.from(batchApprovalMessage({ decision: 'deny', requests, timestamp }));
    expect(verify('sha256', message, { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'))).toBe(
      true,
    );
    // The passkey challenge of a batch is the base64url SHA-256 of the same message.
    const digest = Buffer.from(await crypto.subtle.digest('SHA-256', message)).toString('base64url');
    expect(await batchChallenge({ decision: 'deny', requests, timestamp })).toBe(digest);
  });
});
