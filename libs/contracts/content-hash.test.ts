import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { vaultContentHash } from './content-hash.js';

describe('vault content hash', () => {
  const sha = (text: string) => createHash('sha256').update(text).digest('hex');

  it('hashes the RFC 8785 canonical JSON of the call, method upper-cased, defaults filled', () => {
    const expected = sha(
      '{"body":null,"headers":{},"method":"GET","service_name":"github","url":"https://api.github.com/user"}',
    );
    expect(vaultContentHash({ service_name: 'github', method: 'get', url: 'https://api.github.com/user' })).toBe(
      expected,
    );
  });

  it('is independent of key order and changes with any parameter', () => {
    const base = {
      service_name: 's',
      method: 'POST',
      url: 'https://h/x',
      headers: { b: '2', a: '1' },
      body: '{"n":1}',
    };
    expect(vaultContentHash(base)).toBe(vaultContentHash({ ...base, headers: { a: '1', b: '2' } }));
    expect(vaultContentHash(base)).not.toBe(vaultContentHash({ ...base, body: '{"n":2}' }));
    expect(vaultContentHash(base)).not.toBe(vaultContentHash({ ...base, url: 'https://h/y' }));
  });
});
