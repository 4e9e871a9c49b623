import type { ConnectionView, Deleted, DevicePrincipal } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import type { ClientRow } from '../domain/rows.js';
import { connectionViewOf } from '../domain/views.js';
import type { IdentityDeps } from './deps.js';

/** The account's connected apps (Agents → connected apps on the device app): listed, and revoked at once. */
export function createConnections(deps: Pick<IdentityDeps, 'connections' | 'clients' | 'dropFromCaches'>) {
  const { connections, clients } = deps;
  return {
    async list(device: DevicePrincipal): Promise<{ connections: ConnectionView[] }> {
      const rows = await connections.listLive(device.account_id);
      const byId = new Map<string, ClientRow | undefined>();
      for (const id of new Set(rows.map((r) => r.client_id))) byId.set(id, await clients.get(id));
      return { connections: rows.map((row) => connectionViewOf(row, byId.get(row.client_id))) };
    },

    async revoke(device: DevicePrincipal, connectionId: string): Promise<Deleted> {
      const ended = await connections.revoke(connectionId, `revoked by device ${device.device_ref}`, device.account_id);
      if (!ended) throw errors.connectionNotFound(connectionId);
      deps.dropFromCaches({ id: ended.id, agent_id: ended.agent_id });
      return { deleted: true, id: connectionId };
    },

    /** Ends every connection of an agent that was revoked (its tokens would otherwise act as it). */
    async endForAgent(agentId: string): Promise<number> {
      const ids = await connections.liveOfAgent(agentId);
      for (const id of ids) {
        const ended = await connections.revoke(id, 'its agent was revoked');
        if (ended) deps.dropFromCaches({ id: ended.id, agent_id: ended.agent_id });
      }
      return ids.length;
    },
  };
}
