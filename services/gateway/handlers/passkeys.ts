import type { FastifyInstance } from 'fastify';
import {
  actionsEndpoints as ep,
  PasskeyParams,
  RegistrationResponse,
  registerPasskeyRequestOf,
} from '@agent-auth/contracts';
import type { Bus } from '@agent-auth/bus';
import type { Config } from '@agent-auth/config';

/** The settings passkeys read: where they are bound. */
type PasskeySettings = Pick<Config, 'WEBAUTHN_RP_ID' | 'WEBAUTHN_ORIGINS'>;
import { addRoute } from './route.js';
import { relyingPartyOf } from './relying-party.js';

/** A device's passkeys: creation options, registration, listing and removal. */
export function passkeyRoutes(app: FastifyInstance, bus: Bus, config: PasskeySettings): void {
  addRoute(app, {
    method: 'POST',
    url: '/device/passkeys/options',
    tag: 'Passkeys',
    summary: 'Passkey creation options',
    description:
      'PublicKeyCredentialCreationOptionsJSON for `navigator.credentials.create`: rp id the host the app is served ' +
      'from (or `WEBAUTHN_RP_ID`), ES256, user verification required. Its challenge is single use for 5 minutes. ' +
      '400 `passkey_needs_domain` when the app is reached through an IP address.',
    auth: 'device',
    response: ep.passkeyOptions.response,
    handler: ({ principal, request, requestId }) =>
      bus.request(
        ep.passkeyOptions,
        { device: principal, relying_party: relyingPartyOf(request, config) },
        { requestId },
      ),
  });
  addRoute(app, {
    method: 'POST',
    url: '/device/passkeys',
    tag: 'Passkeys',
    summary: 'Register a passkey',
    description:
      "Verifies the browser's RegistrationResponseJSON against a live challenge of this device, at an expected " +
      'origin, with user verification, and keeps the passkey. From then on approve and deny of this device must ' +
      'carry `webauthn` (or `signature`). 403 `passkey_registration_invalid`, 409 `passkey_exists`.',
    auth: 'device',
    body: RegistrationResponse,
    response: ep.registerPasskey.response,
    handler: ({ principal, body, request, requestId }) =>
      bus.request(ep.registerPasskey, registerPasskeyRequestOf(principal, relyingPartyOf(request, config), body), {
        requestId,
      }),
  });
  addRoute(app, {
    method: 'GET',
    url: '/device/passkeys',
    tag: 'Passkeys',
    summary: 'List passkeys',
    description: 'The passkeys of the calling device; `credential_id` is what `navigator.credentials.get` may use.',
    auth: 'device',
    response: ep.listPasskeys.response,
    handler: ({ principal, requestId }) => bus.request(ep.listPasskeys, { device: principal }, { requestId }),
  });
  addRoute(app, {
    method: 'DELETE',
    url: '/device/passkeys/:passkey_id',
    tag: 'Passkeys',
    summary: 'Remove a passkey',
    description: 'Removes one passkey of the calling device (404 `passkey_not_found` for any other id).',
    auth: 'device',
    params: PasskeyParams,
    response: ep.deletePasskey.response,
    handler: ({ principal, params, requestId }) =>
      bus.request(ep.deletePasskey, { device: principal, passkey_id: params.passkey_id }, { requestId }),
  });
}
