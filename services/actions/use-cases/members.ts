import {
  type DevicePrincipal,
  identityRevoked,
  type JoinRequest,
  type Joined,
  type MemberChange,
  type MemberCreated,
  type MemberDeviceByEmail,
  type MemberList,
  type MemberView,
  type NewMember,
  newId,
  notifierEndpoints,
} from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import {
  INVITE_SECONDS,
  inviteCodeHash,
  inviteRefusal,
  isWellFormedInviteCode,
  newInviteCode,
  type MemberChangeAsked,
  ownerRuleRefusal,
} from '../domain/members.js';
import type { MemberRow } from '../domain/rows.js';
import type { ListedMember } from '../store/members.js';
import type { ActionsDeps } from './deps.js';
import { newDevice } from './identities.js';

type Deps = Pick<ActionsDeps, 'members' | 'bus' | 'log'>;

const view = (m: MemberRow | ListedMember, extra = { devices: 0, invite_pending: false }): MemberView => ({
  member_id: m.id,
  name: m.name,
  email: m.email,
  role: m.role,
  devices: 'devices' in m ? m.devices : extra.devices,
  invite_pending: 'invite_pending' in m ? m.invite_pending : extra.invite_pending,
  created_at: m.created_at.toISOString(),
});

/** The refusal of a change the rules about owners do not allow (403 owner only, 409 the last owner). */
function judgeOwners(asked: MemberChangeAsked, what: string): void {
  const refusal = ownerRuleRefusal(asked);
  if (refusal === 'owner_only') throw errors.roleForbidden(asked.by, what, 'the owner role');
  if (refusal === 'last_owner') throw errors.lastOwner(`${what}: they are the last owner`);
}

const owners = (members: MemberRow[]) => members.filter((m) => m.role === 'owner').length;

/** An email another current member has: Postgres's unique index says so. */
const isEmailTaken = (err: unknown) =>
  (err as { code?: string; constraint_name?: string }).code === '23505' &&
  (err as { constraint_name?: string }).constraint_name === 'members_email_idx';

const orEmailTaken = (err: unknown): never => {
  throw isEmailTaken(err) ? errors.memberEmailTaken() : err;
};

/** An account's members: inviting, joining with an invite, listing, changing and removing. */
export function createMembers(deps: Deps) {
  const { members } = deps;
  /** Every gateway drops the member's devices from its auth cache: removed, or read again with their new role. */
  const dropFromCaches = (memberId: string) => deps.bus.publish(identityRevoked, { member_id: memberId });

  /**
   * Hands the invite to the notifier to email (with SMTP_URL set there), without waiting: the invite stands
   * whether or not the email goes (the code is in the answer too). The code goes only in that message, never a log.
   */
  const emailInvite = (input: {
    invite: MemberCreated['invite'];
    member: Pick<MemberRow, 'id' | 'account_id' | 'name'>;
    to: string;
    origin: string;
  }) => {
    const { invite, member } = input;
    const message = {
      account_id: member.account_id,
      member_id: member.id,
      to: input.to,
      name: member.name,
      code: invite.code,
      expires_at: invite.expires_at,
      app_origin: input.origin,
    };
    deps.bus.request(notifierEndpoints.emailInvite, message).catch((err: unknown) => {
      // The error's name or code only: nothing of the message (its code) can reach the log.
      const reason = (err as { code?: string }).code ?? (err as Error).name;
      deps.log.warn({ member_id: member.id, reason }, 'invite email not handed over');
    });
  };

  return {
    async create(asked: NewMember): Promise<MemberCreated> {
      const { device } = asked;
      judgeOwners({ by: device.role, role: asked.role, owners: 1 }, 'invite an owner');
      const code = newInviteCode();
      const expiresAt = new Date(Date.now() + INVITE_SECONDS * 1000);
      const member = {
        id: newId('member'),
        account_id: device.account_id,
        name: asked.name,
        email: asked.email,
        role: asked.role,
      };
      const invite = { codeHash: inviteCodeHash(code), expiresAt };
      await members.create({ member, invite, actor: `device:${device.device_ref}` }).catch(orEmailTaken);
      const created = { member_id: member.id, invite: { code, expires_at: expiresAt.toISOString() } };
      if (member.email && asked.app_origin)
        emailInvite({ invite: created.invite, member, to: member.email, origin: asked.app_origin });
      return created;
    },

    /** A new device joins its invite's member: 404 for an unknown code, 409 used or expired. */
    async join(asked: JoinRequest): Promise<Joined> {
      if (!isWellFormedInviteCode(asked.code)) throw errors.inviteNotFound();
      const device = newDevice({ name: asked.device_name, public_key: null });
      const joined = await members.join({
        codeHash: inviteCodeHash(asked.code),
        device: device.stored,
        admit: (invite, now) => inviteRefusal(invite, now),
      });
      if ('refused' in joined) {
        if (joined.refused === 'used') throw errors.inviteUsed();
        if (joined.refused === 'expired') throw errors.inviteExpired();
        throw errors.inviteNotFound();
      }
      return { device_id: device.deviceId };
    },

    /**
     * A new device for the member whose email the company's identity provider verified (the identity service has
     * checked the sign-in): refused when no current member, or members of several accounts, have it.
     */
    async addDeviceByEmail(asked: MemberDeviceByEmail): Promise<Joined> {
      const device = newDevice({ name: asked.device_name, public_key: null });
      const added = await members.addDeviceByEmail({ email: asked.email, device: device.stored });
      if ('matches' in added)
        throw added.matches === 0 ? errors.signInNoMember(asked.email) : errors.signInEmailAmbiguous(asked.email);
      return { device_id: device.deviceId };
    },

    /** The current members a routing names: member ids as they are (if still members), roles as their members now. */
    async named(accountId: string, refs: string[]): Promise<{ member_ids: string[] }> {
      const roles = refs.filter((r) => r.startsWith('role:')).map((r) => r.slice('role:'.length));
      const ids = refs.filter((r) => !r.startsWith('role:'));
      return { member_ids: await members.named(accountId, { ids, roles }) };
    },

    async list(device: DevicePrincipal): Promise<MemberList> {
      return { members: (await members.list(device.account_id)).map((m) => view(m)) };
    },

    async update(asked: MemberChange): Promise<MemberView> {
      const { device } = asked;
      const row = await members
        .update({
          accountId: device.account_id,
          memberId: asked.member_id,
          change: { name: asked.name, email: asked.email, role: asked.role },
          actor: `device:${device.device_ref}`,
          judge: (current, target) =>
            judgeOwners(
              { by: device.role, target, role: asked.role, owners: owners(current) },
              target.role === 'owner' ? 'change an owner' : 'make an owner',
            ),
        })
        .catch(orEmailTaken);
      if (!row) throw errors.memberNotFound(asked.member_id);
      // A new role changes what the member's devices may do at once, on every gateway.
      if (asked.role !== undefined) dropFromCaches(row.id);
      const [listed] = (await members.list(device.account_id)).filter((m) => m.id === row.id);
      return view(listed ?? row);
    },

    async remove(device: DevicePrincipal, memberId: string) {
      const revoked = await members.remove({
        accountId: device.account_id,
        memberId,
        actor: `device:${device.device_ref}`,
        judge: (current, target) =>
          judgeOwners({ by: device.role, target, removing: true, owners: owners(current) }, 'remove an owner'),
      });
      if (!revoked) throw errors.memberNotFound(memberId);
      dropFromCaches(memberId);
      return { deleted: true as const, id: memberId };
    },
  };
}
export type Members = ReturnType<typeof createMembers>;
