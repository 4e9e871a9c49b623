import { z } from 'zod';
import { StoredText } from '../validation.js';

const Base64Url = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(/^[A-Za-z0-9_-]+={0,2}$/, 'must be base64url');
const Transport = z.enum(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);
const Extensions = z.record(z.string(), z.unknown()).default({});

/** A passkey's registration as the browser returns it (WebAuthn RegistrationResponseJSON). */
export const RegistrationResponse = z.object({
  id: Base64Url(1366),
  rawId: Base64Url(1366),
  type: z.literal('public-key'),
  response: z
    .object({
      clientDataJSON: Base64Url(8192),
      attestationObject: Base64Url(32768),
      transports: z.array(Transport).max(10).optional(),
    })
    .loose(),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
  clientExtensionResults: Extensions,
});
export type RegistrationResponse = z.infer<typeof RegistrationResponse>;

/** A passkey's assertion as the browser returns it (WebAuthn AuthenticationResponseJSON). */
export const AuthenticationResponse = z.object({
  id: Base64Url(1366),
  rawId: Base64Url(1366),
  type: z.literal('public-key'),
  response: z
    .object({
      clientDataJSON: Base64Url(8192),
      authenticatorData: Base64Url(8192),
      signature: Base64Url(1024),
      userHandle: Base64Url(256).optional(),
    })
    .loose(),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
  clientExtensionResults: Extensions,
});
export type AuthenticationResponse = z.infer<typeof AuthenticationResponse>;

/** Answer of POST /device/passkeys/options: PublicKeyCredentialCreationOptionsJSON, for navigator.credentials.create. */
export const PasskeyCreationOptions = z
  .object({
    challenge: z.string(),
    rp: z.object({ id: z.string().optional(), name: z.string() }),
    user: z.object({ id: z.string(), name: z.string(), displayName: z.string() }),
    pubKeyCredParams: z.array(z.object({ alg: z.number(), type: z.literal('public-key') })),
  })
  .loose();

/** Answer of POST /device/passkeys. */
export const PasskeyCreated = z.object({ passkey_id: z.string(), created_at: z.string() });
export type PasskeyCreated = z.infer<typeof PasskeyCreated>;

/** One passkey of the calling device; `credential_id` is what navigator.credentials.get is allowed to use. */
export const PasskeyView = z.object({
  passkey_id: z.string(),
  credential_id: z.string(),
  transports: z.array(z.string()),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
});
export const PasskeyList = z.object({ passkeys: z.array(PasskeyView) });
export type PasskeyList = z.infer<typeof PasskeyList>;

/** Path of DELETE /device/passkeys/{passkey_id}. */
export const PasskeyParams = z.object({ passkey_id: StoredText().min(1).max(100) });

/**
 * Where the device app is served, as the gateway sees it (or as WEBAUTHN_RP_ID / WEBAUTHN_ORIGINS configure it):
 * the rp id passkeys are bound to and the origins an assertion may come from.
 */
export const RelyingParty = z.object({
  rp_id: z.string().min(1).max(253),
  origins: z.array(z.string().max(300)).min(1).max(20),
});
export type RelyingParty = z.infer<typeof RelyingParty>;
