import { z } from 'zod';
import { Joined } from '../http/members.js';
import { defineEndpoint, confidential, Empty } from './envelope.js';

// Sign-in with the company's OpenID Connect provider (docs/api-guide.md, Teams): the identity service holds the
// provider's settings and the short-lived state of each sign-in; the gateway is its HTTP edge.

/** Whether the device app offers the sign-in, and with whose name on the button. */
export const OidcConfig = z.object({ enabled: z.boolean(), provider_name: z.string().nullable() });
export type OidcConfig = z.infer<typeof OidcConfig>;

/**
 * identity.oidc_start: a sign-in begins. `redirect_uri` is the gateway's callback (the same on every replica);
 * `browser_binding` the random value the gateway set in the browser's cookie, so that only that browser finishes it.
 */
export const OidcStart = z.object({
  redirect_uri: z.string(),
  device_name: z.string().nullable(),
  browser_binding: z.string(),
});
export type OidcStart = z.infer<typeof OidcStart>;
export const OidcStarted = z.object({ authorization_url: z.string() });

/** identity.oidc_finish: the provider sent the browser back to the callback with this query (code, state, iss). */
export const OidcFinish = z.object({ callback_query: z.string(), browser_binding: z.string().nullable() });
export type OidcFinish = z.infer<typeof OidcFinish>;
/** A one-time ticket the device app redeems for its device id (the id itself never travels in a URL). */
export const OidcFinished = z.object({ ticket: z.string() });

/** identity.oidc_redeem: the app redeems its ticket, once. */
export const OidcRedeem = z.object({ ticket: z.string() });

/** actions.bind_member_device: a new device for the current member with this verified email (one across accounts). */
export const MemberDeviceByEmail = z.object({ email: z.string(), device_name: z.string().nullable() });
export type MemberDeviceByEmail = z.infer<typeof MemberDeviceByEmail>;

export const oidcEndpoints = {
  config: defineEndpoint('identity', 'oidc_config', Empty, OidcConfig),
  start: defineEndpoint('identity', 'oidc_start', OidcStart, OidcStarted),
  finish: confidential(defineEndpoint('identity', 'oidc_finish', OidcFinish, OidcFinished)),
  redeem: confidential(defineEndpoint('identity', 'oidc_redeem', OidcRedeem, Joined)),
  bindMemberDevice: confidential(defineEndpoint('actions', 'bind_member_device', MemberDeviceByEmail, Joined)),
} as const;
