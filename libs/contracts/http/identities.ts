import { z } from 'zod';
import { StoredText } from '../validation.js';
import { Plan } from '../enums.js';
import { MemberRole } from './members.js';

/** A device's ECDSA P-256 public key: PEM SPKI text or a JWK object. */
export const PublicKey = z.union([
  StoredText().min(1).max(4096),
  z.object({ kty: z.literal('EC'), crv: z.literal('P-256'), x: StoredText().max(64), y: StoredText().max(64) }).loose(),
]);
export type PublicKey = z.infer<typeof PublicKey>;

/** Body of POST /accounts and POST /devices. */
export const CreateDeviceBody = z.object({
  device_name: StoredText().trim().min(1).max(100).nullish(),
  public_key: PublicKey.nullish(),
});
export type CreateDeviceBody = z.infer<typeof CreateDeviceBody>;

export const AccountCreated = z.object({
  account_id: z.string(),
  device_id: z.string(),
  agent_id: z.string(),
  api_key: z.string(),
  webhook_secret: z.string(),
  plan: Plan,
});
export type AccountCreated = z.infer<typeof AccountCreated>;

export const DeviceCreated = z.object({
  device_id: z.string(),
  device_name: z.string().nullable(),
  has_public_key: z.boolean(),
  created_at: z.string(),
});
export type DeviceCreated = z.infer<typeof DeviceCreated>;

export const CreateAgentBody = z.object({ name: StoredText().trim().min(1, 'must not be empty').max(100) });
export type CreateAgentBody = z.infer<typeof CreateAgentBody>;

export const AgentView = z.object({ agent_id: z.string(), name: z.string(), created_at: z.string() });
export type AgentView = z.infer<typeof AgentView>;

export const AgentCreated = AgentView.extend({ api_key: z.string(), webhook_secret: z.string() });
export type AgentCreated = z.infer<typeof AgentCreated>;

export const AgentList = z.object({ agents: z.array(AgentView) });

/** Answer of POST /totp/enroll: the secret is shown this once (also inside otpauth_url, for a QR code). */
export const TotpEnrolled = z.object({ secret: z.string(), otpauth_url: z.string() });
export type TotpEnrolled = z.infer<typeof TotpEnrolled>;

/** Body of PUT /device/public-key. */
export const SetPublicKeyBody = z.object({ public_key: PublicKey });
export type SetPublicKeyBody = z.infer<typeof SetPublicKeyBody>;

export const PublicKeySet = z.object({
  device_name: z.string().nullable(),
  has_public_key: z.literal(true),
  updated_at: z.string(),
});
export type PublicKeySet = z.infer<typeof PublicKeySet>;

/** GET /account: the plan and this calendar month's (UTC) use of its quota; monthly_quota is null when unlimited. */
export const AccountView = z.object({
  account_id: z.string(),
  /** The calling device's member and their role (docs/security.md, Roles). */
  member_id: z.string(),
  role: MemberRole,
  plan: Plan,
  actions_this_month: z.number().int(),
  monthly_quota: z.number().int().nullable(),
});
export type AccountView = z.infer<typeof AccountView>;

/** Body of POST /account/plan. */
export const SetPlanBody = z.object({ plan: Plan });
export type SetPlanBody = z.infer<typeof SetPlanBody>;
