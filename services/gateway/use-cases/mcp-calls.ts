import type { Bus } from '@agent-auth/bus';
import { mcpCallCancelled } from '@agent-auth/contracts';

type CallId = string | number;

const keyOf = (agentId: string, id: CallId) => `${agentId}\u0000${typeof id}:${id}`;

/**
 * The MCP tool calls this replica is serving, by agent and JSON-RPC id. MCP over HTTP is stateless here, so a
 * client's notifications/cancelled comes in a POST of its own that any replica may receive: it is broadcast, and
 * the replica serving the call stops it.
 */
export function createMcpCalls(bus: Bus) {
  const live = new Map<string, Set<AbortController>>();

  const abortHere = (agentId: string, id: CallId) => {
    for (const controller of live.get(keyOf(agentId, id)) ?? []) controller.abort();
  };
  const unsubscribe = bus.subscribe(mcpCallCancelled, (event) => abortHere(event.agent_id, event.request_id));

  return {
    /** Registers the calls one HTTP request carries; `signal` aborts when any of them is cancelled. */
    track(agentId: string, ids: CallId[]): { signal: AbortSignal; done(): void } {
      const controller = new AbortController();
      const keys = ids.map((id) => keyOf(agentId, id));
      for (const key of keys) {
        const set = live.get(key) ?? new Set<AbortController>();
        set.add(controller);
        live.set(key, set);
      }
      return {
        signal: controller.signal,
        done() {
          for (const key of keys) {
            const set = live.get(key);
            set?.delete(controller);
            if (set?.size === 0) live.delete(key);
          }
        },
      };
    },

    /** Stops the named calls of the agent, wherever they are served. */
    cancel(agentId: string, ids: CallId[]): void {
      for (const id of ids) {
        abortHere(agentId, id);
        bus.publish(mcpCallCancelled, { agent_id: agentId, request_id: id });
      }
    },

    /** Calls served now (for tests). */
    size: () => live.size,

    close: unsubscribe,
  };
}
export type McpCalls = ReturnType<typeof createMcpCalls>;
