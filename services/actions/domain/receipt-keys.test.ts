import { execFileSync } from 'node:child_process';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { generateReceiptKeySpec, parseReceiptKeys, retiredReceiptKeySpec } from './receipt-keys.js';

const verify = (token: string, jwks: Parameters<typeof createLocalJWKSet>[0]) =>
  jwtVerify(token, createLocalJWKSet(jwks), { algorithms: ['ES256'], typ: 'aa-receipt+jwt' });

describe('receipt keys', () => {
  it('signs ES256 receipts with typ and kid that jose verifies against the published set', async () => {
    const keys = await parseReceiptKeys(generateReceiptKeySpec('r1'));
    const receipt = await keys.signReceipt({ sub: 'act_1', status: 'approved' });
    expect(decodeProtectedHeader(receipt)).toEqual({ alg: 'ES256', typ: 'aa-receipt+jwt', kid: 'r1' });
    expect((await verify(receipt, keys.jwks())).payload).toEqual({ sub: 'act_1', status: 'approved' });
    // ES256 in JWS is the raw r||s (RFC 7518 3.4), not the DER that node:crypto writes by default.
    expect(Buffer.from(receipt.split('.')[2]!, 'base64url')).toHaveLength(64);
    expect(keys.jwks().keys).toEqual([
      { kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), kid: 'r1', alg: 'ES256', use: 'sig' },
    ]);
  });

  it('rotates: a receipt signed before still verifies after, the new key signs, the retired one may be public only', async () => {
    const r1 = generateReceiptKeySpec('r1');
    const before = await (await parseReceiptKeys(r1)).signReceipt({ sub: 'act_old' });
    const rotated = await parseReceiptKeys(`${generateReceiptKeySpec('r2')},${retiredReceiptKeySpec(r1)}`);
    expect(rotated.currentKid).toBe('r2');
    expect(rotated.jwks().keys.map((k) => k.kid)).toEqual(['r2', 'r1']);
    expect((await verify(before, rotated.jwks())).payload.sub).toBe('act_old');
    const after = await rotated.signReceipt({ sub: 'act_new' });
    expect(decodeProtectedHeader(after).kid).toBe('r2');
    // A set without the signing key refuses the receipt.
    await expect(verify(after, (await parseReceiptKeys(r1)).jwks())).rejects.toThrow();
  });

  it('accepts the SEC1 DER that openssl writes', async () => {
    let der: Buffer;
    try {
      der = execFileSync('openssl', [
        'genpkey',
        '-algorithm',
        'EC',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-outform',
        'DER',
      ]);
    } catch {
      return; // no openssl on this machine
    }
    const keys = await parseReceiptKeys(`ops:${der.toString('base64')}`);
    expect((await verify(await keys.signReceipt({ sub: 'x' }), keys.jwks())).payload.sub).toBe('x');
  });

  it('refuses specs it cannot sign with, naming the problem', async () => {
    await expect(parseReceiptKeys('')).rejects.toThrow(/no keys/);
    await expect(parseReceiptKeys('r1:bm90IGEga2V5')).rejects.toThrow(/'r1' is not a base64 DER EC key/);
    await expect(parseReceiptKeys('nocolon')).rejects.toThrow(/kid:base64/);
    const r1 = generateReceiptKeySpec('r1');
    await expect(parseReceiptKeys(retiredReceiptKeySpec(r1))).rejects.toThrow(
      /first key \('r1'\) signs, so it must be a private key/,
    );
    await expect(parseReceiptKeys(`${r1},${r1}`)).rejects.toThrow(/appears twice/);
  });
});
