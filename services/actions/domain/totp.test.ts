import { generate } from 'otplib';
import { describe, expect, it } from 'vitest';
import { matchingStep, newTotpSecret } from './totp.js';

const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
const t0 = 1_750_000_020_000; // 20 s into a 30 s step
const step0 = Math.floor(t0 / 30_000);
const codeAt = (ms: number) => generate({ secret, epoch: Math.floor(ms / 1000) });

describe('TOTP', () => {
  it('accepts the current step and one step either side, returning the step the code belongs to', async () => {
    expect(await matchingStep(secret, await codeAt(t0), t0)).toBe(step0);
    expect(await matchingStep(secret, await codeAt(t0 - 30_000), t0)).toBe(step0 - 1);
    expect(await matchingStep(secret, await codeAt(t0 + 30_000), t0)).toBe(step0 + 1);
  });

  it('refuses codes two steps away, wrong codes and codes of another length', async () => {
    expect(await matchingStep(secret, await codeAt(t0 - 60_000), t0)).toBeUndefined();
    expect(await matchingStep(secret, await codeAt(t0 + 60_000), t0)).toBeUndefined();
    const right = await codeAt(t0);
    expect(await matchingStep(secret, right === '000000' ? '000001' : '000000', t0)).toBeUndefined();
    expect(await matchingStep(secret, '12345678', t0)).toBeUndefined();
  });

  it('new secrets are 160-bit base32 with an otpauth URL an authenticator app can scan', () => {
    const { secret: s, otpauthUrl } = newTotpSecret('acc_1');
    expect(s).toMatch(/^[A-Z2-7]{32}$/);
    const url = new URL(otpauthUrl);
    expect(url.protocol).toBe('otpauth:');
    expect(url.searchParams.get('secret')).toBe(s);
    expect(url.searchParams.get('period') ?? '30').toBe('30'); // omitted when it is the default 30 s
    expect(url.searchParams.get('issuer')).toBe('Agent Auth');
  });
});
