import { generateKeyPairSync, sign, webcrypto } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  approvalMessage,
  batchApprovalMessage,
  checkTimestamp,
  parseDevicePublicKey,
  verifyApprovalSignature,
} from './device-signatures.js';

const root = new URL('../../../', import.meta.url);
const example = JSON.parse(readFileSync(new URL('docs/signed-approval-example.json', root), 'utf8'));
const readme = readFileSync(new URL('docs/api-guide.md', root), 'utf8');

function keyPair() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey, pem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

const now = Date.parse('2025-06-01T12:00:00Z');

describe('device public keys', () => {
  it('accepts P-256 as PEM SPKI or JWK and stores PEM', () => {
    const pem = parseDevicePublicKey(example.public_key_pem);
    const jwk = parseDevicePublicKey(example.public_key_jwk);
    expect(pem).toEqual({ ok: true, pem: example.public_key_pem });
    expect(jwk).toEqual(pem);
  });

  it('refuses other curves, RSA, private keys and junk with a reason', () => {
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' })
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString();
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 })
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString();
    expect(parseDevicePublicKey(p384)).toEqual({ ok: false, reason: 'must be an ECDSA P-256 key' });
    expect(parseDevicePublicKey(rsa)).toEqual({ ok: false, reason: 'must be an ECDSA P-256 key' });
    expect(parseDevicePublicKey(example.private_key_jwk)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/private/),
    });
    expect(parseDevicePublicKey('-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/private/),
    });
    expect(parseDevicePublicKey('hello')).toMatchObject({ ok: false });
    expect(parseDevicePublicKey('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----')).toEqual({
      ok: false,
      reason: 'is not a valid public key',
    });
    expect(parseDevicePublicKey({ kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' })).toEqual({
      ok: false,
      reason: 'is not a valid public key',
    });
  });
});

describe('approval signatures', () => {
  it('the example in the API guide verifies, raw base64url and DER base64, and the guide shows exactly these values', () => {
    const message = approvalMessage({
      requestId: example.request_id,
      decision: 'approve',
      contentHash: example.content_hash,
      timestamp: example.timestamp,
    });
    expect(message).toBe(example.message);
    for (const signature of [example.signature_raw_base64url, example.signature_der_base64]) {
      expect(
        verifyApprovalSignature({
          publicKeyPem: example.public_key_pem,
          message,
          signature,
          timestamp: example.timestamp,
          nowMs: now,
        }),
      ).toEqual({ ok: true });
      expect(readme).toContain(signature);
    }
    expect(readme).toContain(example.public_key_pem.split('\n')[1]);
    expect(readme).toContain(example.public_key_jwk.x);
  });

  it('accepts WebCrypto (raw r‖s) signatures in base64 and base64url, with or without padding', async () => {
    const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
    const spki = Buffer.from(await webcrypto.subtle.exportKey('spki', keys.publicKey)).toString('base64');
    const pem = `-----BEGIN PUBLIC KEY-----\n${spki.match(/.{1,64}/g)!.join('\n')}\n-----END PUBLIC KEY-----\n`;
    const timestamp = '2025-06-01T12:01:00.123Z';
    const message = approvalMessage({ requestId: 'act_x', decision: 'deny', contentHash: 'ab'.repeat(32), timestamp });
    const raw = Buffer.from(
      await webcrypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, keys.privateKey, Buffer.from(message)),
    );
    expect(raw.length).toBe(64);
    for (const signature of [
      raw.toString('base64'),
      raw.toString('base64url'),
      raw.toString('base64').replace(/=+$/, ''),
    ]) {
      expect(verifyApprovalSignature({ publicKeyPem: pem, message, signature, timestamp, nowMs: now })).toEqual({
        ok: true,
      });
    }
  });

  it('refuses a missing signature, a tampered message, another key, bad encodings and stale timestamps, saying which', () => {
    const { privateKey, pem } = keyPair();
    const timestamp = '2025-06-01T12:00:00+02:00';
    const message = approvalMessage({ requestId: 'act_1', decision: 'approve', contentHash: null, timestamp });
    const signature = sign('sha256', Buffer.from(message), { key: privateKey, dsaEncoding: 'der' }).toString('base64');
    const at = Date.parse(timestamp);
    const check = (over: Partial<Parameters<typeof verifyApprovalSignature>[0]>) =>
      verifyApprovalSignature({ publicKeyPem: pem, message, signature, timestamp, nowMs: at, ...over });
    expect(check({})).toEqual({ ok: true });
    expect(check({ signature: undefined })).toEqual({
      ok: false,
      reason: expect.stringMatching(/signature and timestamp are required/),
    });
    expect(check({ timestamp: null })).toEqual({
      ok: false,
      reason: expect.stringMatching(/signature and timestamp are required/),
    });
    expect(check({ message: message.replace('approve', 'deny') })).toEqual({
      ok: false,
      reason: expect.stringMatching(/does not verify/),
    });
    expect(check({ publicKeyPem: keyPair().pem })).toEqual({
      ok: false,
      reason: expect.stringMatching(/does not verify/),
    });
    expect(check({ signature: 'not base64!' })).toEqual({ ok: false, reason: 'signature must be base64 or base64url' });
    expect(check({ signature: Buffer.alloc(64).toString('base64') })).toEqual({
      ok: false,
      reason: expect.stringMatching(/does not verify/),
    });
    expect(check({ nowMs: at + 301_000 })).toEqual({ ok: false, reason: expect.stringMatching(/301 s in the past/) });
    expect(check({ nowMs: at - 301_000 })).toEqual({ ok: false, reason: expect.stringMatching(/301 s in the future/) });
    expect(check({ nowMs: at + 300_000 })).toEqual({ ok: true });
  });

  it('timestamps must be ISO 8601 instants with a zone', () => {
    expect(checkTimestamp('2025-06-01T12:00:00Z', now)).toEqual({ ok: true });
    expect(checkTimestamp('2025-06-01T12:00:00.5+00:00', now)).toEqual({ ok: true });
    for (const bad of [
      '2025-06-01 12:00:00Z',
      '2025-06-01T12:00:00',
      '1748779200',
      'yesterday',
      '2025-13-01T12:00:00Z',
    ]) {
      expect(checkTimestamp(bad, now).ok, bad).toBe(false);
    }
  });

  it('the message is five lines, the content hash line empty when none', () => {
    expect(approvalMessage({ requestId: 'act_1', decision: 'approve', contentHash: null, timestamp: 'T' })).toBe(
      'aa-approval-v1\nact_1\napprove\n\nT',
    );
    expect(approvalMessage({ requestId: 'act_1', decision: 'deny', contentHash: 'abc', timestamp: 'T' })).toBe(
      'aa-approval-v1\nact_1\ndeny\nabc\nT',
    );
  });
});

describe('batch approval signatures', () => {
  it('the batch message is aa-approval-batch-v1, the decision, one "id content_hash" line per request in order (ending in the space when no hash), then the timestamp', () => {
    const message = batchApprovalMessage({
      decision: 'approve',
      requests: [
        { id: 'act_2', contentHash: null },
        { id: 'act_1', contentHash: 'ab'.repeat(32) },
        { id: 'act_3', contentHash: undefined },
      ],
      timestamp: '2025-06-01T12:00:00Z',
    });
    expect(message).toBe(
      `aa-approval-batch-v1\napprove\nact_2 \nact_1 ${'ab'.repeat(32)}\nact_3 \n2025-06-01T12:00:00Z`,
    );
    expect(batchApprovalMessage({ decision: 'deny', requests: [{ id: 'a', contentHash: null }], timestamp: 'T' })).toBe(
      'aa-approval-batch-v1\ndeny\na \nT',
    );
  });

  it("verifies with the device's key exactly like a single approval's signature; order, decision and hashes are all signed", async () => {
    const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
    const spki = Buffer.from(await webcrypto.subtle.exportKey('spki', keys.publicKey)).toString('base64');
    const pem = `-----BEGIN PUBLIC KEY-----\n${spki.match(/.{1,64}/g)!.join('\n')}\n-----END PUBLIC KEY-----\n`;
    const timestamp = '2025-06-01T12:00:30Z';
    const requests = [
      { id: 'act_a', contentHash: null },
      { id: 'act_b', contentHash: 'cd'.repeat(32) },
    ];
    const message = batchApprovalMessage({ decision: 'approve', requests, timestamp });
    const signature = Buffer.from(
      await webcrypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, keys.privateKey, Buffer.from(message)),
    ).toString('base64url');
    const check = (m: string) =>
      verifyApprovalSignature({ publicKeyPem: pem, message: m, signature, timestamp, nowMs: now });
    expect(check(message)).toEqual({ ok: true });
    const refused = { ok: false, reason: expect.stringMatching(/does not verify .*\(aa-approval-batch-v1\)$/) };
    expect(check(batchApprovalMessage({ decision: 'deny', requests, timestamp }))).toEqual(refused);
    expect(check(batchApprovalMessage({ decision: 'approve', requests: [...requests].reverse(), timestamp }))).toEqual(
      refused,
    );
    expect(
      check(
        batchApprovalMessage({
          decision: 'approve',
          requests: [requests[0]!, { id: 'act_b', contentHash: null }],
          timestamp,
        }),
      ),
    ).toEqual(refused);
    expect(check(batchApprovalMessage({ decision: 'approve', requests: requests.slice(0, 1), timestamp }))).toEqual(
      refused,
    );
    // The single-request message of the same request never stands in for a batch, nor the other way round.
    expect(check(approvalMessage({ requestId: 'act_a', decision: 'approve', contentHash: null, timestamp }))).toEqual({
      ok: false,
      reason: expect.stringMatching(/\(aa-approval-v1\)$/),
    });
  });
});
