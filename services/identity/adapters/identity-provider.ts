import type { OutboundClient } from '@agent-auth/outbound';
import * as oidc from 'openid-client';

/** The company's OpenID Connect provider, as the sign-in uses it. */
export interface IdentityProvider {
  /** The name on the device app's button. */
  name: string;
  /** Where to send the browser: the provider's authorization endpoint with this sign-in's PKCE challenge, state, nonce. */
  authorizationUrl(input: { redirectUri: string; state: string; nonce: string; codeVerifier: string }): Promise<string>;
  /**
   * Redeems the code of the browser's callback at the token endpoint (with the client's secret and the PKCE verifier)
   * and answers the ID token's claims once its signature (the provider's published keys), issuer, audience, nonce and
   * times are checked. Throws openid-client's errors (domain/sign-in.ts words them).
   */
  finish(input: { callbackUrl: URL; state: string; nonce: string; codeVerifier: string }): Promise<IdTokenClaims>;
}

export interface IdTokenClaims {
  email?: unknown;
  email_verified?: unknown;
  [claim: string]: unknown;
}

export interface ProviderSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  name: string | undefined;
  /** Hosts that may be reached over http (local development and tests). */
  insecureHosts: readonly string[];
}

/**
 * The provider's HTTP calls (discovery, its keys, the token endpoint) made by the outbound client: relayed through the
 * vault executor by default, so that this service needs no route to the internet (docs/decisions.md, One door out).
 */
function fetchThrough(outbound: Pick<OutboundClient, 'request'>): oidc.CustomFetch {
  return async (url, options) => {
    const { body } = options;
    const sent =
      body === undefined || body === null
        ? null
        : typeof body === 'string'
          ? body
          : body instanceof URLSearchParams
            ? body.toString()
            : Buffer.from(await new Response(body as ConstructorParameters<typeof Response>[0]).arrayBuffer());
    const answer = await outbound.request({ url, method: options.method, headers: options.headers, body: sent });
    const empty = answer.statusCode === 204 || answer.statusCode === 304 || options.method === 'HEAD';
    return new Response(empty ? null : new Uint8Array(answer.body), {
      status: answer.statusCode,
      headers: answer.headers,
    });
  };
}

/** The provider, discovered at the first sign-in (and again after a failed discovery); its keys cached by the client. */
export function identityProviderOver(
  outbound: Pick<OutboundClient, 'request'>,
  settings: ProviderSettings,
): IdentityProvider {
  const issuer = new URL(settings.issuer);
  const insecure = issuer.protocol === 'http:' && settings.insecureHosts.includes(issuer.hostname.toLowerCase());
  let discovered: Promise<oidc.Configuration> | undefined;
  const configuration = () => {
    discovered ??= oidc
      .discovery(issuer, settings.clientId, settings.clientSecret, undefined, {
        [oidc.customFetch]: fetchThrough(outbound),
        // The ID token's signature is checked too, not only taken on trust from the TLS channel it came over.
        execute: [oidc.enableNonRepudiationChecks, ...(insecure ? [oidc.allowInsecureRequests] : [])],
      })
      .catch((err: unknown) => {
        discovered = undefined;
        throw err;
      });
    return discovered;
  };
  return {
    name: settings.name ?? issuer.host,
    async authorizationUrl(input) {
      const config = await configuration();
      return oidc
        .buildAuthorizationUrl(config, {
          redirect_uri: input.redirectUri,
          scope: 'openid email profile',
          code_challenge: await oidc.calculatePKCECodeChallenge(input.codeVerifier),
          code_challenge_method: 'S256',
          state: input.state,
          nonce: input.nonce,
        })
        .toString();
    },
    async finish(input) {
      const config = await configuration();
      const tokens = await oidc.authorizationCodeGrant(config, input.callbackUrl, {
        pkceCodeVerifier: input.codeVerifier,
        expectedState: input.state,
        expectedNonce: input.nonce,
        idTokenExpected: true,
      });
      return (tokens.claims() ?? {}) as IdTokenClaims;
    },
  };
}
