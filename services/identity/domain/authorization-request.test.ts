import type { AuthorizationAsked } from '@agent-auth/contracts';
import { describe, expect, it } from 'vitest';
import { authorizationProblem, errorRedirect, redirectWith, sameResource } from './authorization-request.js';

const asked = (over: Partial<AuthorizationAsked> = {}): AuthorizationAsked => ({
  client_id: 'oac_x',
  redirect_uri: 'https://app.example/cb',
  response_type: 'code',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  code_challenge_method: 'S256',
  state: 's',
  scope: null,
  resource: 'https://aa.example/mcp',
  issuer: 'https://aa.example',
  resource_served: 'https://aa.example/mcp',
  ...over,
});

describe('an authorization request', () => {
  it('is the code flow with an S256 challenge, for this resource', () => {
    expect(authorizationProblem(asked())).toBeNull();
    expect(authorizationProblem(asked({ resource: null }))).toBeNull();
    expect(authorizationProblem(asked({ resource: 'https://aa.example/mcp/' }))).toBeNull();
    expect(authorizationProblem(asked({ response_type: 'token' }))?.code).toBe('unsupported_response_type');
    expect(authorizationProblem(asked({ code_challenge: null }))?.code).toBe('invalid_request');
    expect(authorizationProblem(asked({ code_challenge_method: 'plain' }))?.code).toBe('invalid_request');
    expect(authorizationProblem(asked({ code_challenge_method: null }))?.code).toBe('invalid_request');
    expect(authorizationProblem(asked({ code_challenge: 'abc' }))?.code).toBe('invalid_request');
    expect(authorizationProblem(asked({ resource: 'https://other.example/mcp' }))?.code).toBe('invalid_target');
  });

  it('answers on the redirect URI, its own query kept, with state and iss', () => {
    expect(redirectWith('https://app.example/cb?x=1', { code: 'c', state: null, iss: 'https://aa.example' })).toBe(
      'https://app.example/cb?x=1&code=c&iss=https%3A%2F%2Faa.example',
    );
    const denied = new URL(
      errorRedirect(
        { redirect_uri: 'https://app.example/cb', state: 's', issuer: 'https://aa.example' },
        { code: 'access_denied', detail: 'no' },
      ),
    );
    expect(Object.fromEntries(denied.searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'no',
      state: 's',
      iss: 'https://aa.example',
    });
  });

  it('compares resources as URLs, a trailing slash aside', () => {
    expect(sameResource('https://AA.example/mcp', 'https://aa.example/mcp/')).toBe(true);
    expect(sameResource('https://aa.example/mcp', 'https://aa.example/mcp2')).toBe(false);
    expect(sameResource('not a url', 'https://aa.example/mcp')).toBe(false);
  });
});
