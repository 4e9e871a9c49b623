import type { RequestContext } from '@agent-auth/bus';
import type { OidcConfig, OidcFinish, OidcStart } from '@agent-auth/contracts';
import { errors, isAppError } from '@agent-auth/errors';
import { randomNonce, randomPKCECodeVerifier } from 'openid-client';
import type { IdentityProvider } from '../adapters/identity-provider.js';
import type { MemberDevices } from '../adapters/members.js';
import { newSecret, secretHash } from '../domain/secrets.js';
import { refusalOfProviderError, SIGN_IN_SECONDS, TICKET_SECONDS, verifiedEmailOf } from '../domain/sign-in.js';
import type { SignInStore } from '../store/sign-ins.js';

export interface SignInDeps {
  /** Undefined when OIDC_ISSUER is not set. */
  provider: IdentityProvider | undefined;
  signIns: SignInStore;
  members: MemberDevices;
}

const secondsFromNow = (seconds: number) => new Date(Date.now() + seconds * 1000);

/** The provider's calls, their failures worded for the person signing in. */
async function atProvider<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw isAppError(err) ? err : refusalOfProviderError(err);
  }
}

/**
 * Sign-in with the company's OpenID provider: authorization code with PKCE (S256), state and nonce, each sign-in's
 * state stored (any replica finishes it, once, within 10 minutes, only in the browser that started it); the verified
 * email's member gets a new device when the device app redeems the one-time ticket.
 */
export function createSignIn(deps: SignInDeps) {
  const provider = () => {
    if (!deps.provider) throw errors.signInNotConfigured();
    return deps.provider;
  };
  return {
    config(): OidcConfig {
      return { enabled: deps.provider !== undefined, provider_name: deps.provider?.name ?? null };
    },

    async start(asked: OidcStart): Promise<{ authorization_url: string }> {
      const idp = provider();
      const state = newSecret('signInState');
      const nonce = randomNonce();
      const codeVerifier = randomPKCECodeVerifier();
      const url = await atProvider(() =>
        idp.authorizationUrl({ redirectUri: asked.redirect_uri, state, nonce, codeVerifier }),
      );
      await deps.signIns.insert({
        state_hash: secretHash(state),
        binding_hash: secretHash(asked.browser_binding),
        nonce,
        code_verifier: codeVerifier,
        redirect_uri: asked.redirect_uri,
        device_name: asked.device_name,
        expires_at: secondsFromNow(SIGN_IN_SECONDS),
      });
      return { authorization_url: url };
    },

    async finish(asked: OidcFinish): Promise<{ ticket: string }> {
      const idp = provider();
      const query = new URLSearchParams(asked.callback_query);
      const state = query.get('state');
      const started = state ? await deps.signIns.take(secretHash(state)) : undefined;
      if (!state || !started || started.expired)
        throw errors.signInRefused('this sign-in is unknown, used or expired (10 minutes): sign in again');
      // Only the browser that started the sign-in finishes it: a callback URL handed to someone else binds nothing.
      if (!asked.browser_binding || secretHash(asked.browser_binding) !== started.binding_hash)
        throw errors.signInRefused('it was started in another browser: sign in again from the device app');
      const callbackUrl = new URL(started.redirect_uri);
      callbackUrl.search = query.toString();
      const claims = await atProvider(() =>
        idp.finish({ callbackUrl, state, nonce: started.nonce, codeVerifier: started.code_verifier }),
      );
      const email = verifiedEmailOf(claims);
      const ticket = newSecret('signInTicket');
      await deps.signIns.insertTicket({
        ticket_hash: secretHash(ticket),
        email,
        device_name: started.device_name,
        expires_at: secondsFromNow(TICKET_SECONDS),
      });
      return { ticket };
    },

    /** The ticket's new device, once: the member with the verified email gets it (a refusal if there is none). */
    async redeem(ticket: string, ctx: RequestContext): Promise<{ device_id: string }> {
      const taken = await deps.signIns.takeTicket(secretHash(ticket));
      if (!taken) throw errors.signInTicketInvalid();
      const deviceId = await deps.members.add({ email: taken.email, device_name: taken.device_name }, ctx);
      return { device_id: deviceId };
    },
  };
}
export type SignIn = ReturnType<typeof createSignIn>;
