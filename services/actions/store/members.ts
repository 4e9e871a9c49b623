import type postgres from 'postgres';
import type { Sql } from '@agent-auth/db';
import type { MemberRole } from '@agent-auth/contracts';
import type { MemberRow } from '../domain/rows.js';
import type { StoredDevice } from './identities.js';

/** A member as GET /members lists them: the row with their working devices and whether an invite waits. */
export interface ListedMember extends MemberRow {
  devices: number;
  invite_pending: boolean;
}

/** An invite as a join finds it, with its member. */
export interface InviteRow {
  member_id: string;
  account_id: string;
  expires_at: Date;
  used_at: Date | null;
}

type Tx = postgres.TransactionSql<Record<string, never>>;

/** The account's current members, locked until the transaction ends: changes of roles are judged one at a time. */
async function lockedMembers(tx: Tx, accountId: string): Promise<MemberRow[]> {
  return tx<MemberRow[]>`
    select * from actions.members where account_id = ${accountId} and removed_at is null order by id for update`;
}

/** Persistence of an account's members and their invites. */
export function createMemberStore(sql: Sql) {
  return {
    /** Adds a member with their first invite, and its audit entry. */
    async create(input: {
      member: Pick<MemberRow, 'id' | 'account_id' | 'name' | 'email' | 'role'>;
      invite: { codeHash: string; expiresAt: Date };
      actor: string;
    }): Promise<void> {
      const { member, invite } = input;
      await sql.begin(async (tx) => {
        await tx`insert into actions.members (id, account_id, name, email, role)
                 values (${member.id}, ${member.account_id}, ${member.name}, ${member.email}, ${member.role})`;
        await tx`insert into actions.member_invites (code_hash, member_id, account_id, expires_at)
                 values (${invite.codeHash}, ${member.id}, ${member.account_id}, ${invite.expiresAt})`;
        await tx`insert into actions.audit_events (account_id, event, actor, detail)
                 values (${member.account_id}, 'member_added', ${input.actor},
                         ${sql.json({ member_id: member.id, role: member.role })})`;
      });
    },

    /**
     * Joins a device with an invite: the invite is locked, checked by `admit` (its refusal, if any, is returned and
     * nothing is written), used, and the device added to its member, in one transaction; so of two joins with one
     * code exactly one gets a device.
     */
    async join<R>(input: {
      codeHash: string;
      device: StoredDevice;
      admit: (invite: InviteRow | undefined, now: Date) => R | undefined;
    }): Promise<{ refused: R } | { member_id: string; account_id: string }> {
      return sql.begin(async (tx) => {
        const [invite] = await tx<Array<InviteRow & { now: Date }>>`
          select i.member_id, i.account_id, i.expires_at, i.used_at, now() as now
          from actions.member_invites i join actions.members m on m.id = i.member_id
          where i.code_hash = ${input.codeHash} and m.removed_at is null
          for update of i`;
        const refused = input.admit(invite, invite?.now ?? new Date());
        if (refused !== undefined || !invite) return { refused: refused as R };
        const { device } = input;
        await tx`update actions.member_invites set used_at = now() where code_hash = ${input.codeHash}`;
        await tx`insert into actions.devices (ref, id_hash, account_id, member_id, name, public_key)
                 values (${device.ref}, ${device.idHash}, ${invite.account_id}, ${invite.member_id}, ${device.name}, ${device.publicKey})`;
        await tx`insert into actions.audit_events (account_id, event, actor, detail)
                 values (${invite.account_id}, 'member_joined', ${`device:${device.ref}`},
                         ${sql.json({ member_id: invite.member_id, device_ref: device.ref })})`;
        return { member_id: invite.member_id, account_id: invite.account_id };
      });
    },

    /**
     * Adds a device to the current member with this email (compared without case), with its audit entry: the member,
     * or how many current members have the email when that is not exactly one (nothing written then).
     */
    async addDeviceByEmail(input: {
      email: string;
      device: StoredDevice;
    }): Promise<{ member_id: string; account_id: string } | { matches: number }> {
      return sql.begin(async (tx) => {
        const found = await tx<Array<{ id: string; account_id: string }>>`
          select id, account_id from actions.members
          where lower(email) = lower(${input.email}) and removed_at is null
          limit 2 for update`;
        const member = found[0];
        if (found.length !== 1 || !member) return { matches: found.length };
        const { device } = input;
        await tx`insert into actions.devices (ref, id_hash, account_id, member_id, name, public_key)
                 values (${device.ref}, ${device.idHash}, ${member.account_id}, ${member.id}, ${device.name}, ${device.publicKey})`;
        await tx`insert into actions.audit_events (account_id, event, actor, detail)
                 values (${member.account_id}, 'member_signed_in', ${`device:${device.ref}`},
                         ${sql.json({ member_id: member.id, device_ref: device.ref, via: 'oidc' })})`;
        return { member_id: member.id, account_id: member.account_id };
      });
    },

    /** The ids of the account's current members named by id or holding one of the roles. */
    async named(accountId: string, input: { ids: string[]; roles: string[] }): Promise<string[]> {
      const rows = await sql<Array<{ id: string }>>`
        select id from actions.members
        where account_id = ${accountId} and removed_at is null and (id = any(${input.ids}) or role = any(${input.roles}))`;
      return rows.map((r) => r.id);
    },

    /** The account's current members, oldest first, with their working devices and unused invites. */
    async list(accountId: string): Promise<ListedMember[]> {
      return sql<ListedMember[]>`
        select m.*,
          (select count(*)::int from actions.devices d where d.member_id = m.id and d.revoked_at is null) as devices,
          exists (select 1 from actions.member_invites i
                  where i.member_id = m.id and i.used_at is null and i.expires_at > now()) as invite_pending
        from actions.members m
        where m.account_id = ${accountId} and m.removed_at is null
        order by m.created_at, m.id`;
    },

    /**
     * Changes a member: `judge` sees the account's current members (locked) and the member, and throws to refuse;
     * undefined when the member is not a current member of the account.
     */
    async update(input: {
      accountId: string;
      memberId: string;
      change: { name?: string; email?: string | null; role?: MemberRole };
      actor: string;
      judge: (members: MemberRow[], target: MemberRow) => void;
    }): Promise<MemberRow | undefined> {
      const { accountId, memberId, change } = input;
      return sql.begin(async (tx) => {
        const members = await lockedMembers(tx, accountId);
        const target = members.find((m) => m.id === memberId);
        if (!target) return undefined;
        input.judge(members, target);
        const [row] = await tx<MemberRow[]>`
          update actions.members set
            name = ${change.name ?? target.name},
            email = ${change.email === undefined ? target.email : change.email},
            role = ${change.role ?? target.role}
          where id = ${memberId} returning *`;
        await tx`insert into actions.audit_events (account_id, event, actor, detail)
                 values (${accountId}, 'member_changed', ${input.actor},
                         ${sql.json({ member_id: memberId, role: row!.role, ...(change.role && change.role !== target.role ? { role_before: target.role } : {}) })})`;
        return row;
      });
    },

    /**
     * Removes a member: their devices revoked and unused invites voided with them, in one transaction; `judge` as in
     * update. Undefined when the member is not a current member of the account; else the refs of the revoked devices.
     */
    async remove(input: {
      accountId: string;
      memberId: string;
      actor: string;
      judge: (members: MemberRow[], target: MemberRow) => void;
    }): Promise<string[] | undefined> {
      const { accountId, memberId } = input;
      return sql.begin(async (tx) => {
        const members = await lockedMembers(tx, accountId);
        const target = members.find((m) => m.id === memberId);
        if (!target) return undefined;
        input.judge(members, target);
        await tx`update actions.members set removed_at = now() where id = ${memberId}`;
        await tx`update actions.member_invites set used_at = now() where member_id = ${memberId} and used_at is null`;
        const revoked = await tx<Array<{ ref: string }>>`
          update actions.devices set revoked_at = now()
          where member_id = ${memberId} and revoked_at is null returning ref`;
        const refs = revoked.map((r) => r.ref);
        await tx`insert into actions.audit_events (account_id, event, actor, detail)
                 values (${accountId}, 'member_removed', ${input.actor},
                         ${sql.json({ member_id: memberId, role: target.role, devices_revoked: refs })})`;
        return refs;
      });
    },
  };
}
export type MemberStore = ReturnType<typeof createMemberStore>;
