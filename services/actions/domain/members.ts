import { hash } from 'node:crypto';
import { idPrefixes, type MemberRole, randomBase62 } from '@agent-auth/contracts';

/** How long an invite's code lets a device join: long enough for a person to find their phone. */
export const INVITE_SECONDS = 7 * 24 * 3600;

const INVITE_CODE = /^inv_[A-Za-z0-9]{32}$/;

/** A new invite code: a 190-bit bearer secret, shown once to the member who invites. */
export function newInviteCode(): string {
  return idPrefixes.invite + randomBase62(32);
}

/** True for a text shaped like an invite code (checked before any database look-up). */
export function isWellFormedInviteCode(code: string): boolean {
  return INVITE_CODE.test(code);
}

/** What is stored in place of an invite code: its SHA-256 (random enough that a slow hash adds nothing). */
export function inviteCodeHash(code: string): string {
  return hash('sha256', code, 'hex');
}

/** Why an invite does not let a device join now, or undefined when it does. */
export function inviteRefusal(
  invite: { used_at: Date | null; expires_at: Date } | undefined,
  now: Date,
): 'not_found' | 'used' | 'expired' | undefined {
  if (!invite) return 'not_found';
  if (invite.used_at) return 'used';
  if (invite.expires_at.getTime() <= now.getTime()) return 'expired';
  return undefined;
}

/** A change of the account's members, as the rules about owners judge it. */
export interface MemberChangeAsked {
  /** The role of the member whose device asks. */
  by: MemberRole;
  /** The member changed or removed (undefined: a new member). */
  target?: { role: MemberRole };
  /** The role the member is to have (undefined: removed, or the role is not changed). */
  role?: MemberRole;
  removing?: boolean;
  /** How many owners the account has now. */
  owners: number;
}

/**
 * Whether the rules about owners refuse a change: only an owner makes, changes or removes an owner ('owner_only'),
 * and the last owner is never removed or given another role ('last_owner'). Undefined when the change may go.
 */
export function ownerRuleRefusal(asked: MemberChangeAsked): 'owner_only' | 'last_owner' | undefined {
  const touchesOwner = asked.target?.role === 'owner' || asked.role === 'owner';
  if (touchesOwner && asked.by !== 'owner') return 'owner_only';
  const ownerLeaves = asked.target?.role === 'owner' && (asked.removing || (asked.role && asked.role !== 'owner'));
  if (ownerLeaves && asked.owners <= 1) return 'last_owner';
  return undefined;
}
