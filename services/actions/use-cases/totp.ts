import type { RequestContext } from '@agent-auth/bus';
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
    /** Stores a new TOTP secret for the account (encrypted) and returns it once; 409 when one is already configured. */
    async enroll(accountId: string, actor: string) {
      const { secret, otpauthUrl } = newTotpSecret(accountId);
      const stored = await deps.totp.enroll(
        accountId,
        deps.keyring.encrypt(secret, totpSecretContext(accountId)),
        actor,
      );
      if (!stored) throw errors.totpAlreadyConfigured();
      return { secret, otpauth_url: otpauthUrl };
    },

    /**
     * Accepts a TOTP code for the account exactly once, or throws 403: not configured, throttled after too many
     * wrong codes, wrong, or already used. The attempt is claimed before the code is checked and the time step is
     * consumed by a conditional update, so neither concurrent guesses nor two approvals with one code get through.
     * The one exception is the same bus call sent again (`ctx.resent`, its first replica died or went silent after the
     * code was accepted): the step it used is accepted for it again.
     */
    async accept(accountId: string, code: string, ctx?: Pick<RequestContext, 'callId' | 'resent'>): Promise<void> {
      const row = await deps.totp.find(accountId);
      if (!row) throw errors.totpNotConfigured();
      const lockedFor = await deps.totp.claimAttempt(accountId, TOTP_MAX_ATTEMPTS, TOTP_THROTTLE_WINDOW_SECONDS);
      if (lockedFor > 0) throw errors.totpLocked(lockedFor);
      const secret = deps.keyring.decrypt(row.secret_enc, totpSecretContext(accountId));
      const step = await matchingStep(secret, code, Date.now());
      if (step === undefined) throw errors.totpInvalid();
      const callId = ctx?.callId ?? null;
      if (await deps.totp.consumeStep(accountId, step, callId)) return;
      if (callId && ctx?.resent && (await deps.totp.usedByCall(accountId, step, callId))) return;
      throw errors.totpReused();
    },
  };
}
export type Totp = ReturnType<typeof createTotp>;
