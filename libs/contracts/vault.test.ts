import { describe, expect, it } from 'vitest';
import { CreateCredentialBody, describeZodError } from './index.js';

describe('CreateCredentialBody', () => {
  const base = { service_name: 'github', credential_value: 'ghp_x', allowed_hosts: ['API.GitHub.com'] };

  it('fills the defaults of a new credential and normalises hosts to lower case', () => {
    expect(CreateCredentialBody.parse(base)).toMatchObject({
      auth_type: 'bearer',
      auth_header: 'Authorization',
      allowed_hosts: ['api.github.com'],
      description: null,
    });
    expect(CreateCredentialBody.parse({ ...base, allowed_hosts: ['[::1]', '127.0.0.1'] }).allowed_hosts).toEqual([
      '::1',
      '127.0.0.1',
    ]);
  });

  it.each([
    [{ allowed_hosts: [] }, /^allowed_hosts/],
    [{ allowed_hosts: ['https://api.github.com'] }, /^allowed_hosts\[0\]/],
    [{ allowed_hosts: ['api.github.com:443'] }, /^allowed_hosts\[0\]/],
    [{ allowed_hosts: ['*.github.com'] }, /^allowed_hosts\[0\]/],
    [{ credential_value: 'a\r\nX-Evil: 1' }, /^credential_value/],
    [{ credential_value: 'tab\tinside' }, /^credential_value/],
    [{ credential_value: '' }, /^credential_value/],
    [{ auth_type: 'oauth' }, /^auth_type/],
    [{ auth_type: 'custom', auth_header: 'Content-Length' }, /^auth_header/],
    [{ auth_type: 'custom', auth_header: 'X Bad' }, /^auth_header/],
  ])('refuses %j naming the field', (change, field) => {
    const result = CreateCredentialBody.safeParse({ ...base, ...change });
    expect(result.success).toBe(false);
    expect(describeZodError(result.error!)).toMatch(field);
  });
});
