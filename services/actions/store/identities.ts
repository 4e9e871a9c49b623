import type { Sql } from '@agent-auth/db';
import type { AgentRow, DeviceRow, MemberDeviceRow } from '../domain/rows.js';

/** A new device as stored: the hash of its id, never the id. */
export interface StoredDevice {
  ref: string;
  idHash: string;
  name: string | null;
  publicKey: string | null;
}

/** Persistence of accounts, devices and agents. */
export function createIdentityStore(sql: Sql) {
  return {
    /** Creates an account with its owner, their first device and the first agent in one transaction. */
    async createAccount(input: {
      accountId: string;
      ownerId: string;
      device: StoredDevice;
      agent: { id: string; name: string; keyId: string; keyHash: string; webhookSecretEnc: string };
    }): Promise<void> {
      await sql.begin(async (tx) => {
        await tx`insert into actions.accounts (id) values (${input.accountId})`;
        await tx`insert into actions.members (id, account_id, name, role)
                 values (${input.ownerId}, ${input.accountId}, 'Owner', 'owner')`;
        await tx`insert into actions.devices (ref, id_hash, account_id, member_id, name, public_key)
                 values (${input.device.ref}, ${input.device.idHash}, ${input.accountId}, ${input.ownerId}, ${input.device.name}, ${input.device.publicKey})`;
        await tx`insert into actions.agents (id, account_id, name, key_id, key_hash, webhook_secret_enc)
                 values (${input.agent.id}, ${input.accountId}, ${input.agent.name}, ${input.agent.keyId}, ${input.agent.keyHash}, ${input.agent.webhookSecretEnc})`;
        await tx`insert into actions.audit_events (account_id, event, actor, detail)
                 values (${input.accountId}, 'account_created', ${`device:${input.device.ref}`}, ${sql.json({ agent_id: input.agent.id })})`;
      });
    },

    /** Adds a device to a member of the account (the calling device's own member). */
    async addDevice(
      owner: { accountId: string; memberId: string },
      device: StoredDevice,
      actor: string,
    ): Promise<DeviceRow> {
      const { accountId, memberId } = owner;
      return sql.begin(async (tx) => {
        const [row] = await tx<DeviceRow[]>`
          insert into actions.devices (ref, id_hash, account_id, member_id, name, public_key)
          values (${device.ref}, ${device.idHash}, ${accountId}, ${memberId}, ${device.name}, ${device.publicKey})
          returning ref, account_id, member_id, name, public_key, created_at`;
        await tx`insert into actions.audit_events (account_id, event, actor, detail)
                 values (${accountId}, 'device_added', ${actor}, ${sql.json({ device_ref: device.ref, member_id: memberId })})`;
        return row!;
      });
    },

    async addAgent(
      accountId: string,
      agent: { id: string; name: string; keyId: string; keyHash: string; webhookSecretEnc: string },
      actor: string,
    ): Promise<AgentRow> {
      return sql.begin(async (tx) => {
        const [row] = await tx<AgentRow[]>`
          insert into actions.agents (id, account_id, name, key_id, key_hash, webhook_secret_enc)
          values (${agent.id}, ${accountId}, ${agent.name}, ${agent.keyId}, ${agent.keyHash}, ${agent.webhookSecretEnc})
          returning *`;
        await tx`insert into actions.audit_events (account_id, event, actor, detail)
                 values (${accountId}, 'agent_created', ${actor}, ${sql.json({ agent_id: agent.id })})`;
        return row!;
      });
    },

    async listAgents(accountId: string): Promise<AgentRow[]> {
      return sql<
        AgentRow[]
      >`select * from actions.agents where account_id = ${accountId} and revoked_at is null order by created_at, id`;
    },

    /** Revokes an agent's key; false when the agent is unknown to this account or already revoked. */
    async revokeAgent(accountId: string, agentId: string, actor: string): Promise<boolean> {
      const rows = await sql`
        with changed as (
          update actions.agents set revoked_at = now()
          where id = ${agentId} and account_id = ${accountId} and revoked_at is null returning id, account_id
        ), logged as (
          insert into actions.audit_events (account_id, event, actor, detail)
          select account_id, 'agent_revoked', ${actor}, jsonb_build_object('agent_id', id) from changed
        )
        select id from changed`;
      return rows.length === 1;
    },

    /** The encrypted webhook secret of the agent that made a request (revoked agents' requests still get theirs). */
    async webhookSecretFor(agentId: string, requestId: string): Promise<string | undefined> {
      const [row] = await sql<Array<{ webhook_secret_enc: string }>>`
        select a.webhook_secret_enc from actions.agents a join actions.requests r on r.agent_id = a.id
        where a.id = ${agentId} and r.id = ${requestId}`;
      return row?.webhook_secret_enc;
    },

    async agentByKeyId(keyId: string): Promise<AgentRow | undefined> {
      const [row] = await sql<AgentRow[]>`select * from actions.agents where key_id = ${keyId} and revoked_at is null`;
      return row;
    },

    /** The public key of a device (PEM SPKI), or null when it has none; approve and deny check it. */
    async devicePublicKey(ref: string): Promise<string | null> {
      const [row] = await sql<
        Array<{ public_key: string | null }>
      >`select public_key from actions.devices where ref = ${ref}`;
      return row?.public_key ?? null;
    },

    /** Sets or rotates a device's public key. */
    async setDevicePublicKey(ref: string, publicKey: string, actor: string): Promise<DeviceRow | undefined> {
      const [row] = await sql<DeviceRow[]>`
        with changed as (
          update actions.devices set public_key = ${publicKey} where ref = ${ref} and revoked_at is null
          returning ref, account_id, member_id, name, public_key, created_at
        ), logged as (
          -- The public key goes into the audit chain, so an auditor can check a device's signed approvals from it alone.
          insert into actions.audit_events (account_id, event, actor, detail)
          select account_id, 'device_public_key_set', ${actor}, jsonb_build_object('device_ref', ref, 'public_key', public_key) from changed
        )
        select * from changed`;
      return row;
    },

    /** A working device by the hash of its id, with its member's role; none once it or its member is removed. */
    async deviceByIdHash(idHash: string): Promise<MemberDeviceRow | undefined> {
      const [row] = await sql<MemberDeviceRow[]>`
        select d.ref, d.account_id, d.member_id, m.role
        from actions.devices d join actions.members m on m.id = d.member_id
        where d.id_hash = ${idHash} and d.revoked_at is null and m.removed_at is null`;
      return row;
    },
  };
}
export type IdentityStore = ReturnType<typeof createIdentityStore>;
