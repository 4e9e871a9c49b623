import type { Bus } from '@agent-auth/bus';
import { mcpCallCancelled } from '@agent-auth/contracts';

type CallId = string | number;
/** Who made a call: the agent, and the client's session ('' when it has none). */
export interface Caller {
  agent_id: string;
  session_id: string;
}

/** A call's key: its agent, the client's session (the same JSON-RPC id may come from two sessions) and its id. */
const keyOf = (call: { agent_id: string; session_id: string }, id: CallId) =>
  `${call.agent_id}\u0000${call.session_id}\u0000${typeof id}:${id}`;

/**
 * The MCP tool calls this replica is serving, by agent and JSON-RPC id. MCP over HTTP is stateless here, so a
 * client's notifications/cancelled comes in a POST of its own that any replica may receive: it is broadcast, and
 * the replica serving the call stops it.
 */
export function createMcpCalls(bus: Bus) {
  const live = new Map<string, Set<AbortController>>();

  const abortHere = (caller: Caller, id: CallId) => {
    for (const controller of live.get(keyOf(caller, id)) ?? []) controller.abort();
  };
  const unsubscribe = bus.subscribe(mcpCallCancelled, (event) => abortHere(event, event.request_id));

  return {
    /** Registers the calls one HTTP request carries; `signal` aborts when any of them is cancelled. */
    track(caller: Caller, ids: CallId[]): { signal: AbortSignal; done(): void } {
      const controller = new AbortController();
      const keys = ids.map((id) => keyOf(caller, id));
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

    /** Stops the named calls of the agent's session, wherever they are served. */
    cancel(caller: Caller, ids: CallId[]): void {
      for (const id of ids) {
        abortHere(caller, id);
        bus.publish(mcpCallCancelled, { ...caller, request_id: id });
      }
    },

    /** Calls served now (for tests). */
    size: () => live.size,

    close: unsubscribe,
  };
}
export type McpCalls = ReturnType<typeof createMcpCalls>;
