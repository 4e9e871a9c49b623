import type { FastifyRequest } from 'fastify';
import type { Config } from '@agent-auth/config';
import type { RelyingParty } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';

const DOMAIN = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * Where passkeys are bound: WEBAUTHN_RP_ID and WEBAUTHN_ORIGINS when set, otherwise the host the
 * request came to (the app and the API share an origin) and that origin. The browser only lets the app use a
 * passkey for its own host, and the server only accepts assertions made at an expected origin, so a request
 * naming another host cannot use a passkey registered here.
 */
export function relyingPartyOf(
  request: FastifyRequest,
  config: Pick<Config, 'WEBAUTHN_RP_ID' | 'WEBAUTHN_ORIGINS'>,
): RelyingParty {
  const hostname = request.hostname.toLowerCase();
  const rpId = config.WEBAUTHN_RP_ID?.toLowerCase() ?? hostname;
  if (!DOMAIN.test(rpId) || /^[\d.]+$/.test(rpId)) {
    throw errors.passkeyNeedsDomain(hostname.slice(0, 100));
  }
  const origins = config.WEBAUTHN_ORIGINS
    ? config.WEBAUTHN_ORIGINS.split(',')
        .map((o) => o.trim())
        .filter(Boolean)
    : [`${request.protocol}://${request.host}`.toLowerCase()];
  return { rp_id: rpId, origins };
}
