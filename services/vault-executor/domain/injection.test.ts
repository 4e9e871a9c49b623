import { describe, expect, it } from 'vitest';
import { credentialHeader, injectCredential, redact, secretForms } from './injection.js';

describe('credential injection', () => {
  it('builds the header of each auth_type', () => {
    expect(credentialHeader({ auth_type: 'bearer', auth_header: 'Authorization' }, 's3cret')).toEqual([
      'authorization',
      'Bearer s3cret',
    ]);
    expect(credentialHeader({ auth_type: 'basic', auth_header: 'Authorization' }, 'u:p')).toEqual([
      'authorization',
      'Basic dTpw',
    ]);
    expect(credentialHeader({ auth_type: 'api_key', auth_header: 'X-Api-Key' }, 'k')).toEqual(['x-api-key', 'k']);
    expect(credentialHeader({ auth_type: 'custom', auth_header: 'X-Token' }, 't')).toEqual(['x-token', 't']);
  });

  it('drops any agent header of the credential header name, whatever its case', () => {
    const headers = injectCredential({ AUTHORIZATION: 'mine', authorization: 'mine too', 'X-Other': '1' }, [
      'authorization',
      'Bearer s',
    ]);
    expect(headers).toEqual({ 'x-other': '1', authorization: 'Bearer s' });
  });
});

describe('redaction', () => {
  it('replaces the raw, base64, URL- and JSON-encoded forms of a secret', () => {
    const secret = 'ab"c/d+e';
    const forms = secretForms(secret);
    const text = `raw ${secret} b64 ${Buffer.from(secret).toString('base64')} url ${encodeURIComponent(secret)} json ${JSON.stringify(secret)}`;
    const out = redact(text, forms);
    expect(out).toBe('raw [redacted] b64 [redacted] url [redacted] json "[redacted]"');
  });

  it('always redacts the raw value, even a short one, but no short derived form', () => {
    expect(redact('key=xy; other', secretForms('xy'))).toBe('key=[redacted]; other');
  });
});
