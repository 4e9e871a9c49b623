import { describe, expect, it } from 'vitest';
import { chooseRedirectUri, redirectUriMatches, redirectUriProblem } from './redirect-uris.js';

describe('redirect URIs', () => {
  it('registers https, loopback http and an app scheme; refuses plain http elsewhere, fragments and script schemes', () => {
    expect(redirectUriProblem('https://claude.ai/api/mcp/auth_callback')).toBeNull();
    expect(redirectUriProblem('http://127.0.0.1:33418/callback')).toBeNull();
    expect(redirectUriProblem('http://localhost/cb')).toBeNull();
    expect(redirectUriProblem('http://[::1]:8080/cb')).toBeNull();
    expect(redirectUriProblem('cursor.app:/oauth/callback')).toBeNull();
    expect(redirectUriProblem('http://app.example/cb')).toMatch(/must be https/);
    expect(redirectUriProblem('https://app.example/cb#x')).toMatch(/fragment/);
    expect(redirectUriProblem('javascript:alert(1)')).toMatch(/must be https/);
    expect(redirectUriProblem('/relative')).toMatch(/not an absolute URI/);
  });

  it('matches exactly, except a loopback port (RFC 8252 7.3)', () => {
    const registered = 'http://127.0.0.1:3000/callback';
    expect(redirectUriMatches('http://127.0.0.1:3000/callback', registered)).toBe(true);
    expect(redirectUriMatches('http://127.0.0.1:51234/callback', registered)).toBe(true);
    expect(redirectUriMatches('http://127.0.0.1:51234/other', registered)).toBe(false);
    expect(redirectUriMatches('http://127.0.0.1:51234/callback?x=1', registered)).toBe(false);
    expect(redirectUriMatches('http://localhost:3000/callback', registered)).toBe(false);
    expect(redirectUriMatches('https://app.example/cb/', 'https://app.example/cb')).toBe(false);
    expect(redirectUriMatches('https://app.example:444/cb', 'https://app.example/cb')).toBe(false);
  });

  it('chooses the requested URI if registered, else the only one registered', () => {
    expect(chooseRedirectUri(null, ['https://a.example/cb'])).toBe('https://a.example/cb');
    expect(chooseRedirectUri(null, ['https://a.example/cb', 'https://b.example/cb'])).toBeNull();
    expect(chooseRedirectUri('https://b.example/cb', ['https://a.example/cb', 'https://b.example/cb'])).toBe(
      'https://b.example/cb',
    );
    expect(chooseRedirectUri('https://c.example/cb', ['https://a.example/cb'])).toBeNull();
  });
});
