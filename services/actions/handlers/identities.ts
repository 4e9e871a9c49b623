import { type BoundHandler, handle, handleOnce } from '@agent-auth/bus';
import { actionsEndpoints as ep } from '@agent-auth/contracts';
import type { UseCases } from '../use-cases/use-cases.js';

/** Accounts, devices and agents on the bus: creation, authentication, revocation. */
export function identityHandlers(uc: UseCases): BoundHandler[] {
  const { identities } = uc;
  return [
    handle(ep.createAccount, ({ first_device }) => identities.createAccount(first_device)),
    handle(ep.createDevice, ({ device, new_device }) => identities.createDevice(device, new_device)),
    handle(ep.createAgent, ({ device, name }) => identities.createAgent(device, name)),
    handle(ep.listAgents, ({ device }) => identities.listAgents(device.account_id)),
    handleOnce(ep.deleteAgent, ({ device, agent_id }) => identities.revokeAgent(device, agent_id)),
    handle(ep.authenticateAgent, ({ api_key }) => identities.authenticateAgent(api_key)),
    handle(ep.authenticateDevice, ({ device_id }) => identities.authenticateDevice(device_id)),
  ];
}
