import { generateSecret, generateURI, verify } from 'otplib';
import { errors } from '@agent-auth/errors';
import type { ActionsDeps } from './deps.js';

/** 30 s steps; a code of the step before or after the current one is accepted too (clock drift). */
const TOTP_PERIOD_SECONDS = 30;
const TOTP_DRIFT_STEPS = 1;
/** Wrong codes allowed per account in a window before TOTP approval is locked until the window ends. */
export const TOTP_MAX_ATTEMPTS = 5;
export const TOTP_THROTTLE_WINDOW_SECONDS = 300;
const ISSUER = 'Agent Auth';

const secretContext = (accountId: string) => `account:${accountId}:totp_secret`;

/** A new TOTP secret for an account (160 bits, base32) and its otpauth:// URL for an authenticator app. */
export function newTotpSecret(accountId: string): { secret: string; otpauthUrl: string } {
  const secret = generateSecret({ length: 20 });
  return { secret, otpauthUrl: generateURI({ issuer: ISSUER, label: accountId, secret, period: TOTP_PERIOD_SECONDS, digits: 6 }) };
}

/** The time step a code is valid for, or undefined when it matches none of the current step and its neighbours. */
export async function matchingStep(secret: string, code: string, nowMs: number): Promise<number | undefined> {
  try {
    const result = await verify({
      secret, token: code, period: TOTP_PERIOD_SECONDS, epoch: Math.floor(nowMs / 1000), epochTolerance: TOTP_PERIOD_SECONDS * TOTP_DRIFT_STEPS,
    });
    return result.valid && 'timeStep' in result ? result.timeStep : undefined;
  } catch {
    return undefined; // a code otplib cannot even compare (e.g. 8 digits for a 6-digit secret) is simply wrong
  }
}

/** Stores a new TOTP secret for the account (encrypted) and returns it once; 409 when one is already configured. */
export async function enrollTotp(deps: ActionsDeps, accountId: string, actor: string) {
  const { secret, otpauthUrl } = newTotpSecret(accountId);
  const stored = await deps.totp.enroll(accountId, deps.keyring.encrypt(secret, secretContext(accountId)), actor);
  if (!stored) throw errors.conflict('TOTP already configured');
  return { secret, otpauth_url: otpauthUrl };
}

/**
 * Accepts a TOTP code for the account exactly once, or throws 403: not configured, throttled after too many wrong
 * codes, wrong, or already used. The attempt is claimed before the code is checked and the time step is consumed by
 * a conditional update, so neither concurrent guesses nor two approvals with one code can get through together.
 */
export async function acceptTotpCode(deps: ActionsDeps, accountId: string, code: string): Promise<void> {
  const row = await deps.totp.find(accountId);
  if (!row) throw errors.forbidden('TOTP is not configured for this account');
  const lockedFor = await deps.totp.claimAttempt(accountId, TOTP_MAX_ATTEMPTS, TOTP_THROTTLE_WINDOW_SECONDS);
  if (lockedFor > 0) {
    throw errors.forbidden(`Too many wrong TOTP codes: TOTP approval is locked for this account for ${lockedFor} s`);
  }
  const step = await matchingStep(deps.keyring.decrypt(row.secret_enc, secretContext(accountId)), code, Date.now());
  if (step === undefined) throw errors.forbidden('Invalid TOTP code');
  if (!(await deps.totp.consumeStep(accountId, step))) throw errors.forbidden('TOTP code was already used; wait for the next code');
}
