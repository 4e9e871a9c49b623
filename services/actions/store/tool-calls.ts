import type { Sql } from '@agent-auth/db';
import type { RequestRow } from '../domain/rows.js';

/** How long a retried hook call finds the request its first call made. */
export const JOIN_WINDOW_SECONDS = 600;

/** The requests coding agents' hooks made, by the key a retried call shares with its first. */
export function createToolCallStore(sql: Sql) {
  return {
    /**
     * The request an earlier call with this key made in the last ten minutes, unless it was cancelled (the caller
     * gave up on it, so a new call asks again).
     */
    async findJoinable(agentId: string, joinKey: string): Promise<RequestRow | undefined> {
      const [row] = await sql<RequestRow[]>`
        select r.* from actions.tool_calls t join actions.requests r on r.id = t.request_id
        where t.agent_id = ${agentId} and t.join_key = ${joinKey}
          and t.created_at > now() - make_interval(secs => ${JOIN_WINDOW_SECONDS})
          and r.status <> 'cancelled'
        order by t.created_at desc limit 1`;
      return row;
    },

    /** Records the request a hook call made, so that its retries find it. */
    async record(call: { request_id: string; agent_id: string; join_key: string; client: string }): Promise<void> {
      await sql`
        insert into actions.tool_calls (request_id, agent_id, join_key, client)
        values (${call.request_id}, ${call.agent_id}, ${call.join_key}, ${call.client})
        on conflict (request_id) do nothing`;
    },

    /** Forgets up to `batch` calls past the join window; how many. */
    async prune(batch: number): Promise<number> {
      const rows = await sql`
        delete from actions.tool_calls where request_id in (
          select request_id from actions.tool_calls
          where created_at < now() - make_interval(secs => ${JOIN_WINDOW_SECONDS}) limit ${batch})
        returning 1`;
      return rows.length;
    },
  };
}
export type ToolCallStore = ReturnType<typeof createToolCallStore>;
