import { type BoundHandler, handle, handleOnce } from '@agent-auth/bus';
import { oidcEndpoints as ep } from '@agent-auth/contracts';
import type { SignIn } from '../use-cases/sign-in.js';

/** Sign-in with the company's OpenID provider, on the bus. */
export function signInHandlers(signIn: SignIn): BoundHandler[] {
  return [
    handle(ep.config, async () => signIn.config()),
    handle(ep.start, (asked) => signIn.start(asked)),
    // Kept per call, sealed (a ticket, a device id): a resend gets the first answer, not a refusal of the used state.
    handleOnce(ep.finish, (asked) => signIn.finish(asked)),
    handleOnce(ep.redeem, ({ ticket }, ctx) => signIn.redeem(ticket, ctx)),
  ];
}
