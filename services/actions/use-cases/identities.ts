import { hash, verify } from '@node-rs/argon2';
import {
  type AccountCreated,
  type AgentCreated,
  type AgentPrincipal,
  type NewDevice,
  type DeviceCreated,
  type DevicePrincipal,
  identityRevoked,
  newId,
} from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import {
  apiKeyId,
  deviceIdHash,
  isWellFormedDeviceId,
  newApiKey,
  newDeviceId,
  newWebhookSecret,
} from '../domain/credentials.js';
import { normalizePublicKey } from '../domain/device-signatures.js';
import type { ActionsDeps } from './deps.js';

// OWASP's argon2id baseline: 19 MiB, 2 passes, 1 lane. Algorithm 2 is Argon2id.
const ARGON2 = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/** The non-secret handle of a device as used in principals and audit entries. */
function newDeviceRef(): string {
  return newId('device', 16).replace(/^dev_/, 'dvc_');
}

/** A new device: its id (returned once) and what is stored of it. */
export function newDevice(asked: NewDevice) {
  const deviceId = newDeviceId();
  const publicKey = normalizePublicKey(asked.public_key);
  return {
    deviceId,
    stored: { ref: newDeviceRef(), idHash: deviceIdHash(deviceId), name: asked.name, publicKey },
  };
}

type Deps = Pick<ActionsDeps, 'identities' | 'keyring' | 'bus'>;

/** Accounts, devices and agents: creation, authentication, revocation. */
export function createIdentities(deps: Deps) {
  const { identities, keyring } = deps;

  const newAgentSecrets = async (agentId: string) => {
    const { apiKey, keyId } = newApiKey();
    const webhookSecret = newWebhookSecret();
    const keyHash = await hash(apiKey, ARGON2);
    const webhookSecretEnc = keyring.encrypt(webhookSecret, `agent:${agentId}:webhook_secret`);
    return { apiKey, webhookSecret, row: { id: agentId, keyId, keyHash, webhookSecretEnc } };
  };

  return {
    async createAccount(firstDevice: NewDevice): Promise<AccountCreated> {
      const accountId = newId('account');
      const device = newDevice(firstDevice);
      const agent = await newAgentSecrets(newId('agent'));
      // The account's first device is its owner's.
      await identities.createAccount({
        accountId,
        ownerId: newId('member'),
        device: device.stored,
        agent: { ...agent.row, name: 'default' },
      });
      return {
        account_id: accountId,
        device_id: device.deviceId,
        agent_id: agent.row.id,
        api_key: agent.apiKey,
        webhook_secret: agent.webhookSecret,
        plan: 'free',
      };
    },

    /** Another device of the calling device's member. */
    async createDevice(by: DevicePrincipal, asked: NewDevice): Promise<DeviceCreated> {
      const device = newDevice(asked);
      const owner = { accountId: by.account_id, memberId: by.member_id };
      const row = await identities.addDevice(owner, device.stored, `device:${by.device_ref}`);
      return {
        device_id: device.deviceId,
        device_name: row.name,
        has_public_key: row.public_key !== null,
        created_at: row.created_at.toISOString(),
      };
    },

    async createAgent(by: DevicePrincipal, name: string): Promise<AgentCreated> {
      const agent = await newAgentSecrets(newId('agent'));
      const row = await identities.addAgent(by.account_id, { ...agent.row, name }, `device:${by.device_ref}`);
      return {
        agent_id: row.id,
        name: row.name,
        created_at: row.created_at.toISOString(),
        api_key: agent.apiKey,
        webhook_secret: agent.webhookSecret,
      };
    },

    async listAgents(accountId: string) {
      const rows = await identities.listAgents(accountId);
      return { agents: rows.map((r) => ({ agent_id: r.id, name: r.name, created_at: r.created_at.toISOString() })) };
    },

    async revokeAgent(by: DevicePrincipal, agentId: string) {
      const revoked = await identities.revokeAgent(by.account_id, agentId, `device:${by.device_ref}`);
      if (!revoked) throw errors.agentNotFound(agentId);
      deps.bus.publish(identityRevoked, { agent_id: agentId });
      return { deleted: true as const, id: agentId };
    },

    async authenticateAgent(apiKey: string): Promise<AgentPrincipal> {
      const keyId = apiKeyId(apiKey);
      const agent = keyId ? await identities.agentByKeyId(keyId) : undefined;
      if (!agent || !(await verify(agent.key_hash, apiKey))) throw errors.apiKeyInvalid();
      return { account_id: agent.account_id, agent_id: agent.id };
    },

    async authenticateDevice(deviceId: string): Promise<DevicePrincipal> {
      const found = isWellFormedDeviceId(deviceId)
        ? await identities.deviceByIdHash(deviceIdHash(deviceId))
        : undefined;
      if (!found) throw errors.deviceIdInvalid();
      return { account_id: found.account_id, device_ref: found.ref, member_id: found.member_id, role: found.role };
    },
  };
}
