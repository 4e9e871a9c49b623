import { generateSecret, generateURI, verify } from 'otplib';

/** 30 s steps; a code of the step before or after the current one is accepted too (clock drift). */
const TOTP_PERIOD_SECONDS = 30;
const TOTP_DRIFT_STEPS = 1;
/** Wrong codes allowed per account in a window before TOTP approval is locked until the window ends. */
export const TOTP_MAX_ATTEMPTS = 5;
export const TOTP_THROTTLE_WINDOW_SECONDS = 300;
const ISSUER = 'Agent Auth';

/** The encryption context of an account's TOTP secret (binds the ciphertext to the account). */
export const totpSecretContext = (accountId: string) => `account:${accountId}:totp_secret`;

/** A new TOTP secret for an account (160 bits, base32) and its otpauth:// URL for an authenticator app. */
export function newTotpSecret(accountId: string): { secret: string; otpauthUrl: string } {
  const secret = generateSecret({ length: 20 });
  const otpauthUrl = generateURI({ issuer: ISSUER, label: accountId, secret, period: TOTP_PERIOD_SECONDS, digits: 6 });
  return { secret, otpauthUrl };
}

/** The time step a code is valid for, or undefined when it matches none of the current step and its neighbours. */
export async function matchingStep(secret: string, code: string, nowMs: number): Promise<number | undefined> {
  try {
    const result = await verify({
      secret,
      token: code,
      period: TOTP_PERIOD_SECONDS,
      epoch: Math.floor(nowMs / 1000),
      epochTolerance: TOTP_PERIOD_SECONDS * TOTP_DRIFT_STEPS,
    });
    return result.valid && 'timeStep' in result ? result.timeStep : undefined;
  } catch {
    return undefined; // a code otplib cannot even compare (e.g. 8 digits for a 6-digit secret) is simply wrong
  }
}
