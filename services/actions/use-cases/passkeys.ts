import type { RequestContext } from '@agent-auth/bus';
import {
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticatorTransportFuture,
} from '@simplewebauthn/server';
import {
  newId,
  type AuthenticationResponse,
  type DevicePrincipal,
  type RegistrationResponse,
  type RelyingParty,
} from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { challengeOfClientData, decisionChallenge } from '../domain/passkey-challenge.js';
import type { ActionsDeps } from './deps.js';

/** ES256 (ECDSA P-256 with SHA-256), the one algorithm a passkey may use here (COSE -7). */
const ES256 = -7;
/** How long a registration challenge may be answered. */
export const REGISTRATION_CHALLENGE_SECONDS = 300;

/** The WebAuthn library throws on anything malformed; each failure becomes a 403 naming what did not verify. */
async function verified<T>(work: () => Promise<T>, refuse: (reason: string) => Error): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw refuse(err instanceof Error ? err.message : 'does not verify');
  }
}

/** A device's passkeys: registration, listing, removal, and verifying a decision made with one. */
export function createPasskeys(deps: Pick<ActionsDeps, 'passkeys'>) {
  const { passkeys } = deps;
  return {
    /** PublicKeyCredentialCreationOptionsJSON for this device; its challenge is kept, single use, for 5 minutes. */
    async options(device: DevicePrincipal, rp: RelyingParty) {
      const existing = await passkeys.forDevice(device.device_ref);
      const options = await generateRegistrationOptions({
        rpName: 'Agent Auth',
        rpID: rp.rp_id,
        userName: device.account_id,
        userDisplayName: 'Agent Auth approvals',
        userID: new TextEncoder().encode(device.device_ref),
        attestationType: 'none',
        supportedAlgorithmIDs: [ES256],
        timeout: 120_000,
        excludeCredentials: existing.map((p) => ({
          id: p.credential_id,
          transports: p.transports as AuthenticatorTransportFuture[],
        })),
        authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
      });
      await passkeys.saveChallenge(device.device_ref, options.challenge, rp.rp_id, REGISTRATION_CHALLENGE_SECONDS);
      return { ...options };
    },

    /** Verifies a registration against a live challenge of the device (user verification, ES256) and keeps the passkey. */
    async register(device: DevicePrincipal, rp: RelyingParty, body: RegistrationResponse, ctx: RequestContext) {
      const challenge = challengeOfClientData(body.response.clientDataJSON);
      const issued = challenge ? await passkeys.takeChallenge(device.device_ref, challenge) : undefined;
      if (!issued)
        throw errors.passkeyRegistrationInvalid(
          'it answers no live challenge of this device; ask POST /device/passkeys/options again',
        );
      const result = await verified(
        () =>
          verifyRegistrationResponse({
            response: body as Parameters<typeof verifyRegistrationResponse>[0]['response'],
            expectedChallenge: challenge!,
            expectedOrigin: rp.origins,
            expectedRPID: issued.rp_id,
            requireUserVerification: true,
            supportedAlgorithmIDs: [ES256],
          }),
        errors.passkeyRegistrationInvalid,
      );
      if (!result.verified) throw errors.passkeyRegistrationInvalid('it does not verify');
      const { credential } = result.registrationInfo;
      const row = await passkeys.add(
        {
          id: newId('passkey'),
          account_id: device.account_id,
          device_ref: device.device_ref,
          credential_id: credential.id,
          public_key: Buffer.from(credential.publicKey),
          sign_count: credential.counter,
          transports: credential.transports ?? body.response.transports ?? [],
          rp_id: issued.rp_id,
        },
        `device:${device.device_ref}`,
      );
      if (!row) throw errors.passkeyExists();
      ctx.log.info({ passkey_id: row.id }, 'passkey registered');
      return { passkey_id: row.id, created_at: row.created_at.toISOString() };
    },

    async list(device: DevicePrincipal) {
      return {
        passkeys: (await passkeys.forDevice(device.device_ref)).map((p) => ({
          passkey_id: p.id,
          credential_id: p.credential_id,
          transports: p.transports,
          created_at: p.created_at.toISOString(),
          last_used_at: p.last_used_at?.toISOString() ?? null,
        })),
      };
    },

    async remove(device: DevicePrincipal, id: string) {
      if (!(await passkeys.remove(device.device_ref, id, `device:${device.device_ref}`)))
        throw errors.passkeyNotFound(id);
      return { deleted: true as const, id };
    },

    /** Whether a device has a passkey (then every decision of it must be verified). */
    deviceHasAny: (device: DevicePrincipal) => passkeys.deviceHasAny(device.device_ref),

    /**
     * Verifies a passkey assertion over an approval message: it must come from one of the calling device's passkeys,
     * at an expected origin, with user verification, and be new (a growing sign count, never seen before). 403
     * otherwise. The passkey id that verified the holder. A send of the same bus call again (its first replica died
     * after accepting the assertion) is accepted as the first was: that replica verified this passkey's assertion
     * over this very message, in this call.
     */
    async verifyDecision(
      device: DevicePrincipal,
      rp: RelyingParty | undefined,
      assertion: AuthenticationResponse,
      message: string,
      ctx?: Pick<RequestContext, 'callId' | 'resent'>,
    ): Promise<string> {
      if (!rp) throw errors.passkeyAssertionInvalid('the gateway did not say which origin the assertion was made at');
      const passkey = await passkeys.byCredential(device.device_ref, assertion.id);
      if (!passkey) throw errors.passkeyAssertionInvalid('the credential is not a passkey of this device');
      const challenge = decisionChallenge(message);
      const callId = ctx?.callId ?? null;
      if (callId && ctx?.resent && (await passkeys.acceptedInCall(passkey.id, challenge, callId))) return passkey.id;
      const result = await verified(
        () =>
          verifyAuthenticationResponse({
            response: assertion as Parameters<typeof verifyAuthenticationResponse>[0]['response'],
            expectedChallenge: challenge,
            expectedOrigin: rp.origins,
            expectedRPID: passkey.rp_id,
            requireUserVerification: true,
            credential: {
              id: passkey.credential_id,
              publicKey: new Uint8Array(passkey.public_key),
              counter: Number(passkey.sign_count),
            },
          }),
        errors.passkeyAssertionInvalid,
      );
      if (!result.verified || !result.authenticationInfo.userVerified)
        throw errors.passkeyAssertionInvalid('the holder was not verified');
      if (!(await passkeys.acceptAssertion(passkey.id, result.authenticationInfo.newCounter, challenge, callId))) {
        throw errors.passkeyAssertionInvalid('already used (a replay, or the sign count did not grow)');
      }
      return passkey.id;
    },
  };
}
export type Passkeys = ReturnType<typeof createPasskeys>;
