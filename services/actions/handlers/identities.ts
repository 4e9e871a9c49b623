import { type BoundHandler, handle, handleOnce } from '@agent-auth/bus';
import { actionsEndpoints as ep } from '@agent-auth/contracts';
import type { UseCases } from '../use-cases/use-cases.js';

/** Accounts, devices and agents on the bus: creation, authentication, revocation. */
export function identityHandlers(uc: UseCases): BoundHandler[] {
  const { identities } = uc;
  return [
    // Kept per call, sealed (their answers hold the new credentials): a resend gets them, not a second account,
    // device or agent.
    handleOnce(ep.createAccount, ({ first_device }) => identities.createAccount(first_device)),
    handleOnce(ep.createDevice, ({ device, new_device }) => identities.createDevice(device, new_device)),
    handleOnce(ep.createAgent, ({ device, name }) => identities.createAgent(device, name)),
    handle(ep.listAgents, ({ device }) => identities.listAgents(device.account_id)),
    handleOnce(ep.deleteAgent, ({ device, agent_id }) => identities.revokeAgent(device, agent_id)),
    handle(ep.authenticateAgent, ({ api_key }) => identities.authenticateAgent(api_key)),
    handle(ep.authenticateDevice, ({ device_id }) => identities.authenticateDevice(device_id)),
  ];
}
