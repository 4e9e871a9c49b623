import { type BoundHandler, handle, handleOnce } from '@agent-auth/bus';
import { vaultEndpoints as ep } from '@agent-auth/contracts';
import type { createCredentials } from '../use-cases/credentials.js';

/** The device's credential endpoints and the agent's list of services, on the bus. */
export function credentialHandlers(credentials: ReturnType<typeof createCredentials>): BoundHandler[] {
  return [
    handleOnce(ep.createCredential, (credential, ctx) => credentials.create(credential, ctx)),
    handle(ep.listCredentials, ({ device }) => credentials.list(device)),
    handleOnce(ep.deleteCredential, ({ device, credential_id }, ctx) => credentials.remove(device, credential_id, ctx)),
    handle(ep.listServices, ({ agent }) => credentials.services(agent)),
  ];
}
