import type { Bus, RequestContext } from '@agent-auth/bus';
import { actionsEndpoints, type DevicePrincipal, type DeviceRef } from '@agent-auth/contracts';

/** The account's agents as the identity service sees them: the actions service keeps them (for now). */
export interface AccountAgents {
  /** Whether the agent is a live agent of the device's account (only the account is read). */
  isLive(device: DeviceRef, agentId: string, ctx: RequestContext): Promise<boolean>;
  /** Creates an agent of the device's account for a client to act as; its API key is never shown to anyone. */
  create(device: DevicePrincipal, name: string, ctx: RequestContext): Promise<string>;
}

export function agentsOverBus(bus: Bus): AccountAgents {
  return {
    async isLive(device, agentId, ctx) {
      const { agents } = await bus.request(actionsEndpoints.listAgents, { device }, { requestId: ctx.requestId });
      return agents.some((a) => a.agent_id === agentId);
    },
    async create(device, name, ctx) {
      const created = await bus.request(actionsEndpoints.createAgent, { device, name }, { requestId: ctx.requestId });
      return created.agent_id;
    },
  };
}
