import { newId, vaultEndpoints as ep, vaultLimits } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { handle, type BoundHandler } from '@agent-auth/bus';
import { credentialContext, type VaultDeps } from './deps.js';
import { toCredentialView, toVaultService } from './views.js';

/** The device's credential CRUD and the agent's list of services; values are written encrypted and never read back out. */
export function credentialHandlers(deps: VaultDeps): BoundHandler[] {
  return [
    handle(ep.createCredential, async ({ device, body }, ctx) => {
      if ((await deps.credentials.countForAccount(device.account_id)) >= vaultLimits.credentialsPerAccount) {
        throw errors.conflict(`The vault holds at most ${vaultLimits.credentialsPerAccount} credentials per account`);
      }
      const ids = { id: newId('credential'), account_id: device.account_id };
      const created = await deps.credentials.insert({
        ...ids,
        service_name: body.service_name,
        auth_type: body.auth_type,
        auth_header: body.auth_type === 'bearer' || body.auth_type === 'basic' ? 'Authorization' : body.auth_header,
        allowed_hosts: [...new Set(body.allowed_hosts)],
        description: body.description,
        value_enc: deps.keyring.encrypt(body.credential_value, credentialContext(ids)),
      });
      if (!created) throw errors.conflict(`A credential for service '${body.service_name}' already exists`);
      ctx.log.info({ credential_id: created.id, service_name: created.service_name }, 'credential stored');
      return toCredentialView(created);
    }),

    handle(ep.listCredentials, async ({ device }) => ({
      credentials: (await deps.credentials.listForAccount(device.account_id)).map(toCredentialView),
    })),

    handle(ep.deleteCredential, async ({ device, credential_id }, ctx) => {
      if (!(await deps.credentials.delete(credential_id, device.account_id))) throw errors.notFound(`Credential '${credential_id}' not found`);
      ctx.log.info({ credential_id }, 'credential deleted');
      return { deleted: true as const, id: credential_id };
    }),

    handle(ep.listServices, async ({ agent }) => ({
      services: (await deps.credentials.listForAccount(agent.account_id)).map(toVaultService),
    })),
  ];
}
