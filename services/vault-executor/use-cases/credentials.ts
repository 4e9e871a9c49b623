import type { RequestContext } from '@agent-auth/bus';
import {
  type AgentPrincipal,
  type NewCredential,
  type DevicePrincipal,
  newId,
  vaultLimits,
} from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { toCredentialView, toVaultService } from '../domain/views.js';
import { credentialContext, type VaultDeps } from './deps.js';

/** The device's credentials (values written encrypted, never read back out) and the agent's list of services. */
export function createCredentials(deps: Pick<VaultDeps, 'credentials' | 'keyring'>) {
  const { credentials, keyring } = deps;
  return {
    async create(body: NewCredential, ctx: RequestContext) {
      const { device } = body;
      if ((await credentials.countForAccount(device.account_id)) >= vaultLimits.credentialsPerAccount) {
        throw errors.tooManyCredentials(vaultLimits.credentialsPerAccount);
      }
      const ids = { id: newId('credential'), account_id: device.account_id };
      const fixedHeader = body.auth_type === 'bearer' || body.auth_type === 'basic';
      const created = await credentials.insert({
        ...ids,
        service_name: body.service_name,
        auth_type: body.auth_type,
        auth_header: fixedHeader ? 'Authorization' : body.auth_header,
        allowed_hosts: [...new Set(body.allowed_hosts)],
        description: body.description,
        value_enc: keyring.encrypt(body.credential_value, credentialContext(ids)),
      });
      if (!created) throw errors.credentialExists(body.service_name);
      ctx.log.info({ credential_id: created.id, service_name: created.service_name }, 'credential stored');
      return toCredentialView(created);
    },

    async list(device: DevicePrincipal) {
      return { credentials: (await credentials.listForAccount(device.account_id)).map(toCredentialView) };
    },

    async remove(device: DevicePrincipal, credentialId: string, ctx: RequestContext) {
      if (!(await credentials.delete(credentialId, device.account_id))) throw errors.credentialNotFound(credentialId);
      ctx.log.info({ credential_id: credentialId }, 'credential deleted');
      return { deleted: true as const, id: credentialId };
    },

    async services(agent: AgentPrincipal) {
      return { services: (await credentials.listForAccount(agent.account_id)).map(toVaultService) };
    },
  };
}
