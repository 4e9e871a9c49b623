import type { RequestContext } from '@agent-auth/bus';
import type { DevicePrincipal } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import {
  matchingStep,
  newTotpSecret,
  TOTP_MAX_ATTEMPTS,
  TOTP_THROTTLE_WINDOW_SECONDS,
  totpSecretContext,
} from '../domain/totp.js';
import type { ActionsDeps } from './deps.js';

/** TOTP enrolment and one-time acceptance of codes, over the TOTP store and the keyring. */
export function createTotp(deps: Pick<ActionsDeps, 'totp' | 'keyring'>) {
  return {
    /**
     * Stores a new TOTP secret for the device's member (encrypted) and returns it once; 409 when they have one
     * configured already. Each person of a team has an authenticator of their own.
     */
    async enroll(device: DevicePrincipal) {
      const accountId = device.account_id;
      const { secret, otpauthUrl } = newTotpSecret(accountId);
      const stored = await deps.totp.enroll(
        { accountId, memberId: device.member_id },
        deps.keyring.encrypt(secret, totpSecretContext(accountId)),
        `device:${device.device_ref}`,
      );
      if (!stored) throw errors.totpAlreadyConfigured();
      return { secret, otpauth_url: otpauthUrl };
    },

    /**
     * Accepts a TOTP code of the device's member exactly once, or throws 403: not configured, throttled after too many
     * wrong codes, wrong, or already used. The attempt is claimed before the code is checked and the time step is
     * consumed by a conditional update, so neither concurrent guesses nor two approvals with one code get through.
     * The one exception is the same bus call sent again (`ctx.resent`, its first replica died or went silent after the
     * code was accepted): the step it used is accepted for it again.
     */
    async accept(
      device: Pick<DevicePrincipal, 'member_id'>,
      code: string,
      ctx?: Pick<RequestContext, 'callId' | 'resent'>,
    ): Promise<void> {
      const memberId = device.member_id;
      const row = await deps.totp.find(memberId);
      if (!row) throw errors.totpNotConfigured();
      const lockedFor = await deps.totp.claimAttempt(memberId, TOTP_MAX_ATTEMPTS, TOTP_THROTTLE_WINDOW_SECONDS);
      if (lockedFor > 0) throw errors.totpLocked(lockedFor);
      const secret = deps.keyring.decrypt(row.secret_enc, totpSecretContext(row.account_id));
      const step = await matchingStep(secret, code, Date.now());
      if (step === undefined) throw errors.totpInvalid();
      const callId = ctx?.callId ?? null;
      if (await deps.totp.consumeStep(memberId, step, callId)) return;
      if (callId && ctx?.resent && (await deps.totp.usedByCall(memberId, step, callId))) return;
      throw errors.totpReused();
    },
  };
}
export type Totp = ReturnType<typeof createTotp>;
