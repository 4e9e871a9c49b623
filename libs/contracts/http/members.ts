import { z } from 'zod';
import { StoredText } from '../validation.js';

/**
 * What a member may do (docs/security.md, Roles): `owner` and `admin` manage the account, `approver` answers requests,
 * `auditor` reads the audit trail. Only an owner makes or unmakes an owner.
 */
export const memberRoles = ['owner', 'admin', 'approver', 'auditor'] as const;
export const MemberRole = z.enum(memberRoles);
export type MemberRole = z.infer<typeof MemberRole>;

const MemberName = StoredText().trim().min(1, 'must not be empty').max(100);
const Email = StoredText().trim().max(254).pipe(z.email('must be an email address'));

/** Body of POST /members: a person to invite. */
export const CreateMemberBody = z.object({ name: MemberName, email: Email.nullish(), role: MemberRole });
export type CreateMemberBody = z.infer<typeof CreateMemberBody>;

/** A single-use code that lets one device join as the member, until `expires_at`. */
export const Invite = z.object({ code: z.string(), expires_at: z.string() });
export type Invite = z.infer<typeof Invite>;

/** Answer of POST /members: the invite's code is shown only here. */
export const MemberCreated = z.object({ member_id: z.string(), invite: Invite });
export type MemberCreated = z.infer<typeof MemberCreated>;

/** Body of POST /members/join. */
export const JoinBody = z.object({
  code: StoredText().trim().min(1).max(100),
  device_name: StoredText().trim().min(1).max(100).nullish(),
});
export type JoinBody = z.infer<typeof JoinBody>;

/** Answer of POST /members/join: the new device's id, shown only here. */
export const Joined = z.object({ device_id: z.string() });
export type Joined = z.infer<typeof Joined>;

/** One member as GET /members shows them; `devices` counts their working devices, `invite_pending` an unused code. */
export const MemberView = z.object({
  member_id: z.string(),
  name: z.string(),
  email: z.string().nullable(),
  role: MemberRole,
  devices: z.number().int(),
  invite_pending: z.boolean(),
  created_at: z.string(),
});
export type MemberView = z.infer<typeof MemberView>;

export const MemberList = z.object({ members: z.array(MemberView) });
export type MemberList = z.infer<typeof MemberList>;

/** Body of PATCH /members/{member_id}: the fields to change. */
export const UpdateMemberBody = z
  .object({ name: MemberName.optional(), email: Email.nullish(), role: MemberRole.optional() })
  .refine((b) => b.name !== undefined || b.email !== undefined || b.role !== undefined, {
    message: 'give name, email or role',
  });
export type UpdateMemberBody = z.infer<typeof UpdateMemberBody>;

/** `{member_id}` of /members/{member_id}. */
export const MemberParams = z.object({ member_id: StoredText().max(100) });

/** Query of GET /auth/oidc/start: the name the new device will have. */
export const OidcStartQuery = z.object({ device_name: StoredText().trim().min(1).max(100).optional() });

/** Body of POST /auth/oidc/redeem: the ticket the sign-in put in the app's URL fragment. */
export const OidcRedeemBody = z.object({ ticket: StoredText().trim().min(1).max(200) });
