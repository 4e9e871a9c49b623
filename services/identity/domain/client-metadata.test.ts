import type { ClientRegistration } from '@agent-auth/contracts';
import { describe, expect, it } from 'vitest';
import { documentMetadataOf, isMetadataDocumentUrl, registeredMetadataOf } from './client-metadata.js';

const registration = (over: Partial<ClientRegistration> = {}): ClientRegistration => ({
  redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
  client_name: 'Claude',
  client_uri: null,
  logo_uri: null,
  token_endpoint_auth_method: 'none',
  grant_types: null,
  response_types: null,
  scope: null,
  ...over,
});

describe('client registration (RFC 7591)', () => {
  it('keeps the code flow with refresh tokens, and the auth method asked (client_secret_basic by default)', () => {
    expect(registeredMetadataOf(registration())).toMatchObject({
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    expect(registeredMetadataOf(registration({ token_endpoint_auth_method: null })).token_endpoint_auth_method).toBe(
      'client_secret_basic',
    );
  });

  it('refuses what it does not support, with the RFC codes', () => {
    const refusal = (over: Partial<ClientRegistration>) => {
      try {
        registeredMetadataOf(registration(over));
      } catch (err) {
        return (err as { code: string }).code;
      }
      return 'accepted';
    };
    expect(refusal({ redirect_uris: ['http://evil.example/cb'] })).toBe('invalid_redirect_uri');
    expect(refusal({ grant_types: ['client_credentials'] })).toBe('invalid_client_metadata');
    expect(refusal({ grant_types: ['refresh_token'] })).toBe('invalid_client_metadata');
    expect(refusal({ response_types: ['token'] })).toBe('invalid_client_metadata');
    expect(refusal({ token_endpoint_auth_method: 'private_key_jwt' })).toBe('invalid_client_metadata');
  });

  it('shows the holder only https links of the client', () => {
    const kept = registeredMetadataOf(
      registration({ client_uri: 'javascript:x', logo_uri: 'https://a.example/l.png' }),
    );
    expect(kept.client_uri).toBeNull();
    expect(kept.logo_uri).toBe('https://a.example/l.png');
  });
});

describe('client ID metadata documents', () => {
  const url = 'https://app.example/oauth/client.json';

  it('takes an https URL with a path as a document URL (http only for the development hosts)', () => {
    expect(isMetadataDocumentUrl(url, [])).toBe(true);
    expect(isMetadataDocumentUrl('https://app.example/', [])).toBe(false);
    expect(isMetadataDocumentUrl('https://app.example/a/../b', [])).toBe(false);
    expect(isMetadataDocumentUrl('https://user:pw@app.example/c.json', [])).toBe(false);
    expect(isMetadataDocumentUrl('http://127.0.0.1:3000/c.json', [])).toBe(false);
    expect(isMetadataDocumentUrl('http://127.0.0.1:3000/c.json', ['127.0.0.1'])).toBe(true);
    expect(isMetadataDocumentUrl('oac_123', [])).toBe(false);
  });

  it('needs the document to name its own URL and its redirect URIs; the client is public', () => {
    const doc = { client_id: url, client_name: 'App', redirect_uris: ['https://app.example/cb'] };
    expect(documentMetadataOf(url, doc)).toMatchObject({ client_name: 'App', token_endpoint_auth_method: 'none' });
    expect(() => documentMetadataOf(url, { ...doc, client_id: 'https://other.example/c.json' })).toThrow(/own URL/);
    expect(() => documentMetadataOf(url, { ...doc, redirect_uris: [] })).toThrow(/redirect_uris/);
    expect(() => documentMetadataOf(url, { ...doc, token_endpoint_auth_method: 'private_key_jwt' })).toThrow(
      /only none/,
    );
    expect(() => documentMetadataOf(url, [doc])).toThrow(/JSON object/);
  });
});
