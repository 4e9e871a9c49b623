import type { Bus } from '@agent-auth/bus';
import { mcpCallCancelled } from '@agent-auth/contracts';
import type { Cancellation } from '@agent-auth/mcp-server';

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
 * The calls of one HTTP request: cancelled once, its listeners told then. Plain listeners rather than an
 * AbortController: one is made per tool call, and a call is seldom cancelled.
 */
class TrackedCalls implements Cancellation {
  cancelled = false;
  private listeners: Array<() => void> = [];

  onCancel(listener: () => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    for (const listener of this.listeners.splice(0)) listener();
  }
}

/**
 * The MCP tool calls this replica is serving, by agent and JSON-RPC id. MCP over HTTP is stateless here, so a
 * client's notifications/cancelled comes in a POST of its own that any replica may receive: it is broadcast, and
 * the replica serving the call stops it.
 */
export function createMcpCalls(bus: Bus) {
  const live = new Map<string, Set<TrackedCalls>>();

  const abortHere = (caller: Caller, id: CallId) => {
    for (const tracked of live.get(keyOf(caller, id)) ?? []) tracked.cancel();
  };
  const unsubscribe = bus.subscribe(mcpCallCancelled, (event) => abortHere(event, event.request_id));

  return {
    /** Registers the calls one HTTP request carries; its listeners hear when any of them is cancelled. */
    track(caller: Caller, ids: CallId[]): Cancellation & { done(): void } {
      const tracked = new TrackedCalls();
      const keys = ids.map((id) => keyOf(caller, id));
      for (const key of keys) {
        const set = live.get(key) ?? new Set<TrackedCalls>();
        set.add(tracked);
        live.set(key, set);
      }
      return Object.assign(tracked, {
        done() {
          for (const key of keys) {
            const set = live.get(key);
            set?.delete(tracked);
            if (set?.size === 0) live.delete(key);
          }
        },
      });
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
