import { describe, expect, it } from 'vitest';
import { generateKeyringSpec, parseKeyring } from './index.js';

describe('keyring', () => {
  const spec = generateKeyringSpec('k1');

  it('round-trips text and never stores it in the clear', () => {
    const ring = parseKeyring(spec);
    const token = ring.encrypt('{"card":"4111"}', 'request:act_1:metadata');
    expect(token).toMatch(/^v1:k1:/);
    expect(token).not.toContain('4111');
    expect(ring.decrypt(token, 'request:act_1:metadata')).toBe('{"card":"4111"}');
  });

  it('uses a fresh nonce for every value', () => {
    const ring = parseKeyring(spec);
    expect(ring.encrypt('same', 'c')).not.toBe(ring.encrypt('same', 'c'));
    // Across refills of the nonce pool (1,024 nonces each): no nonce repeats, and each value still opens.
    const tokens = Array.from({ length: 3000 }, (_, i) => ring.encrypt(`v${i}`, 'c'));
    expect(new Set(tokens.map((t) => t.split(':')[2])).size).toBe(3000);
    expect(tokens.every((t, i) => ring.decrypt(t, 'c') === `v${i}`)).toBe(true);
  });

  it('refuses a ciphertext moved to another context or tampered with', () => {
    const ring = parseKeyring(spec);
    const token = ring.encrypt('secret', 'request:act_1:metadata');
    expect(() => ring.decrypt(token, 'request:act_2:metadata')).toThrow();
    const parts = token.split(':');
    const body = Buffer.from(parts[3]!, 'base64url');
    body[0] = body[0]! ^ 1;
    expect(() =>
      ring.decrypt([...parts.slice(0, 3), body.toString('base64url')].join(':'), 'request:act_1:metadata'),
    ).toThrow();
  });

  it('rotates: a new active key encrypts, the old one still decrypts', () => {
    const old = parseKeyring(spec);
    const token = old.encrypt('kept', 'ctx');
    const rotated = parseKeyring(`${generateKeyringSpec('k2')},${spec}`);
    expect(rotated.activeKeyId).toBe('k2');
    expect(rotated.decrypt(token, 'ctx')).toBe('kept');
    expect(rotated.encrypt('new', 'ctx')).toMatch(/^v1:k2:/);
    expect(() => parseKeyring(generateKeyringSpec('k3')).decrypt(token, 'ctx')).toThrow(/unknown key id 'k1'/);
  });

  it('rejects malformed specs with a clear message', () => {
    expect(() => parseKeyring('')).toThrow(/no keys/);
    expect(() => parseKeyring('k1:c2hvcnQ=')).toThrow(/32 bytes/);
    expect(() => parseKeyring('nocolon')).toThrow(/id:base64key/);
  });
});
