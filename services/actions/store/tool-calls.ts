import { gatherWrites, isStatementRefused, type Sql } from '@agent-auth/db';
import type { RequestRow } from '../domain/rows.js';

/** How long a retried hook call finds the request its first call made. */
export const JOIN_WINDOW_SECONDS = 600;

interface JoinKey {
  agentId: string;
  joinKey: string;
}

/** findJoinable of several keys in one statement: one answer per key, in their order. */
async function joinableOf(sql: Sql, keys: JoinKey[]): Promise<Array<RequestRow | undefined>> {
  const rows = await sql<Array<RequestRow & { key_ord: string }>>`
    select k.key_ord, r.* from unnest(${keys.map((k) => k.agentId)}::text[], ${keys.map((k) => k.joinKey)}::text[])
      with ordinality as k(agent_id, join_key, key_ord)
    cross join lateral (
      select r.* from actions.tool_calls t join actions.requests r on r.id = t.request_id
      where t.agent_id = k.agent_id and t.join_key = k.join_key
        and t.created_at > now() - make_interval(secs => ${JOIN_WINDOW_SECONDS})
        and r.status <> 'cancelled'
      order by t.created_at desc limit 1) r`;
  const found = new Map<number, RequestRow>(rows.map(({ key_ord, ...row }) => [Number(key_ord), row as RequestRow]));
  return keys.map((_, i) => found.get(i + 1));
}

/** The requests coding agents' hooks made, by the key a retried call shares with its first. */
export function createToolCallStore(sql: Sql) {
  // Every hook call looks for an earlier one first, and nearly always finds none: concurrent calls share one
  // statement (gatherWrites), as creates do, instead of a statement each beside their gathered create.
  const gatherLookup = gatherWrites<JoinKey, RequestRow | undefined>({
    write: (keys) => joinableOf(sql, keys),
    inFlight: 2,
    maxBatch: 32,
    overdueMs: 3,
    retryAlone: isStatementRefused,
  });
  return {
    /**
     * The request an earlier call with this key made in the last ten minutes, unless it was cancelled (the caller
     * gave up on it, so a new call asks again).
     */
    findJoinable(agentId: string, joinKey: string): Promise<RequestRow | undefined> {
      return gatherLookup({ agentId, joinKey });
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
