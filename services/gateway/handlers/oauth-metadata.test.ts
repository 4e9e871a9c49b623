import { OAuthMetadataSchema, OAuthProtectedResourceMetadataSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import { errors } from '@agent-auth/errors';
import { describe, expect, it } from 'vitest';
import { oauthErrorOf } from './oauth.js';
import { authorizationServerMetadata, protectedResourceMetadata } from './oauth-metadata.js';

describe('the OAuth metadata documents', () => {
  it('are what the MCP SDK reads: the resource /mcp and this origin as its authorization server', () => {
    const prm = OAuthProtectedResourceMetadataSchema.parse(protectedResourceMetadata('https://aa.example'));
    expect(prm).toMatchObject({ resource: 'https://aa.example/mcp', authorization_servers: ['https://aa.example'] });
    const as = OAuthMetadataSchema.parse(authorizationServerMetadata('https://aa.example'));
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
    expect(as.response_types_supported).toEqual(['code']);
    expect(as.token_endpoint).toBe('https://aa.example/oauth/token');
  });
});

describe('OAuth error answers', () => {
  it('keep the RFC codes, turn the request faults into invalid_request, and never leak a 500 detail', () => {
    expect(oauthErrorOf(errors.oauthInvalidGrant('used'))).toEqual({
      status: 400,
      error: 'invalid_grant',
      error_description: 'used',
    });
    expect(oauthErrorOf(errors.oauthInvalidClient('who')).status).toBe(401);
    expect(oauthErrorOf(errors.malformedJson('x'))).toMatchObject({ status: 400, error: 'invalid_request' });
    expect(oauthErrorOf(errors.bodyTooLarge(10))).toMatchObject({ status: 400, error: 'invalid_request' });
    expect(oauthErrorOf(errors.serviceUnavailable('identity'))).toMatchObject({
      status: 503,
      error: 'temporarily_unavailable',
    });
    expect(oauthErrorOf(new Error('secret internals'))).toEqual({
      status: 500,
      error: 'server_error',
      error_description: 'Internal error',
    });
  });
});
