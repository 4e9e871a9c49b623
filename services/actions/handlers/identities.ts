import { hash, verify } from '@node-rs/argon2';
import { actionsEndpoints as ep, identityRevoked, newId, type CreateDeviceBody } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { handle, type BoundHandler } from '@agent-auth/bus';
import type { ActionsDeps } from './deps.js';
import { parseDevicePublicKey } from './device-signatures.js';
import { apiKeyId, deviceIdHash, isWellFormedDeviceId, newApiKey, newDeviceId, newWebhookSecret } from './credentials.js';

// OWASP's argon2id baseline: 19 MiB, 2 passes, 1 lane. Algorithm 2 is Argon2id.
const ARGON2 = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/** The non-secret handle of a device as used in principals and audit entries. */
function newDeviceRef(): string {
  return newId('device', 16).replace(/^dev_/, 'dvc_');
}

/** Validates a device public key (400 naming the field) and returns the PEM SPKI form stored. */
export function normalizePublicKey(key: CreateDeviceBody['public_key']): string | null {
  if (key === null || key === undefined) return null;
  const parsed = parseDevicePublicKey(key);
  if (!parsed.ok) throw errors.badRequest(`public_key: ${parsed.reason}`);
  return parsed.pem;
}

async function newAgentSecrets(deps: ActionsDeps, agentId: string) {
  const { apiKey, keyId } = newApiKey();
  const webhookSecret = newWebhookSecret();
  return {
    apiKey,
    webhookSecret,
    row: {
      id: agentId,
      keyId,
      keyHash: await hash(apiKey, ARGON2),
      webhookSecretEnc: deps.keyring.encrypt(webhookSecret, `agent:${agentId}:webhook_secret`),
    },
  };
}

/** Accounts, devices and agents: creation, authentication, revocation. */
export function identityHandlers(deps: ActionsDeps): BoundHandler[] {
  const { identities } = deps;
  return [
    handle(ep.createAccount, async ({ body }) => {
      const accountId = newId('account');
      const deviceId = newDeviceId();
      const agent = await newAgentSecrets(deps, newId('agent'));
      await identities.createAccount({
        accountId,
        device: { ref: newDeviceRef(), idHash: deviceIdHash(deviceId), name: body.device_name ?? null, publicKey: normalizePublicKey(body.public_key) },
        agent: { ...agent.row, name: 'default' },
      });
      return { account_id: accountId, device_id: deviceId, agent_id: agent.row.id, api_key: agent.apiKey, webhook_secret: agent.webhookSecret, plan: 'free' as const };
    }),

    handle(ep.createDevice, async ({ device, body }) => {
      const deviceId = newDeviceId();
      const row = await identities.addDevice(
        device.account_id,
        { ref: newDeviceRef(), idHash: deviceIdHash(deviceId), name: body.device_name ?? null, publicKey: normalizePublicKey(body.public_key) },
        `device:${device.device_ref}`,
      );
      return { device_id: deviceId, device_name: row.name, has_public_key: row.public_key !== null, created_at: row.created_at.toISOString() };
    }),

    handle(ep.createAgent, async ({ device, body }) => {
      const agent = await newAgentSecrets(deps, newId('agent'));
      const row = await identities.addAgent(device.account_id, { ...agent.row, name: body.name }, `device:${device.device_ref}`);
      return { agent_id: row.id, name: row.name, created_at: row.created_at.toISOString(), api_key: agent.apiKey, webhook_secret: agent.webhookSecret };
    }),

    handle(ep.listAgents, async ({ device }) => {
      const rows = await identities.listAgents(device.account_id);
      return { agents: rows.map((r) => ({ agent_id: r.id, name: r.name, created_at: r.created_at.toISOString() })) };
    }),

    handle(ep.deleteAgent, async ({ device, agent_id }) => {
      const revoked = await identities.revokeAgent(device.account_id, agent_id, `device:${device.device_ref}`);
      if (!revoked) throw errors.notFound(`Agent '${agent_id}' not found`);
      deps.bus.publish(identityRevoked, { agent_id });
      return { deleted: true as const, id: agent_id };
    }),

    handle(ep.authenticateAgent, async ({ api_key }) => {
      const keyId = apiKeyId(api_key);
      const agent = keyId ? await identities.agentByKeyId(keyId) : undefined;
      if (!agent || !(await verify(agent.key_hash, api_key))) throw errors.unauthorized('Invalid API key');
      return { account_id: agent.account_id, agent_id: agent.id };
    }),

    handle(ep.authenticateDevice, async ({ device_id }) => {
      const device = isWellFormedDeviceId(device_id) ? await identities.deviceByIdHash(deviceIdHash(device_id)) : undefined;
      if (!device) throw errors.unauthorized('Invalid device ID');
      return { account_id: device.account_id, device_ref: device.ref };
    }),
  ];
}
