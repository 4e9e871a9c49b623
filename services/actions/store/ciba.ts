import type { Sql } from '@agent-auth/db';
import type { CibaRequestRow } from '../domain/ciba.js';

export interface NewCibaRow {
  auth_req_id: string;
  action_id: string;
  agent_id: string;
  account_id: string;
  mode: 'poll' | 'ping';
  interval_seconds: number;
  notification_token_enc: string | null;
  expires_in_seconds: number;
}

/** A CIBA client as the device app shows it: the agent, and its ping endpoint when it has one. */
export interface CibaClientRow {
  agent_id: string;
  name: string;
  notification_endpoint: string | null;
}

/** The CIBA requests and the agents' ping endpoints (migration 061). */
export function createCibaStore(sql: Sql) {
  return {
    async insert(row: NewCibaRow): Promise<void> {
      await sql`
        insert into actions.ciba_requests (auth_req_id, action_id, agent_id, account_id, mode, interval_seconds,
          notification_token_enc, expires_at)
        values (${row.auth_req_id}, ${row.action_id}, ${row.agent_id}, ${row.account_id}, ${row.mode},
          ${row.interval_seconds}, ${row.notification_token_enc}, now() + make_interval(secs => ${row.expires_in_seconds}))`;
    },

    /** Takes back a request whose action request was refused (quota, validation). */
    async remove(authReqId: string): Promise<void> {
      await sql`delete from actions.ciba_requests where auth_req_id = ${authReqId}`;
    },

    /** A CIBA request of this client; undefined for an auth_req_id unknown or another client's. */
    async find(authReqId: string, agentId: string): Promise<CibaRequestRow | undefined> {
      const [row] = await sql<CibaRequestRow[]>`
        select auth_req_id, action_id, agent_id, account_id, mode, interval_seconds, notification_token_enc,
          expires_at, issued_at
        from actions.ciba_requests where auth_req_id = ${authReqId} and agent_id = ${agentId}`;
      return row;
    },

    /**
     * One poll by its client: notes its time and, when it came sooner than the interval after the last one, grows
     * the interval by `step` and says so (too_fast). Undefined for an auth_req_id unknown or another client's. One
     * statement, row-locked, so polls on different replicas count against each other.
     */
    async poll(authReqId: string, agentId: string, step: number): Promise<CibaRequestRow | undefined> {
      const [row] = await sql<CibaRequestRow[]>`
        with prev as (
          select auth_req_id, (last_polled_at is not null
            and last_polled_at > now() - make_interval(secs => interval_seconds)) as too_fast
          from actions.ciba_requests where auth_req_id = ${authReqId} and agent_id = ${agentId}
          for update
        )
        update actions.ciba_requests c set last_polled_at = now(),
          interval_seconds = c.interval_seconds + case when p.too_fast then ${step}::int else 0 end
        from prev p where c.auth_req_id = p.auth_req_id
        returning c.auth_req_id, c.action_id, c.agent_id, c.account_id, c.mode, c.interval_seconds,
          c.notification_token_enc, c.expires_at, c.issued_at, p.too_fast`;
      return row;
    },

    /** Marks the tokens issued (and the poll); false when they were already (a second exchange). */
    async markIssued(authReqId: string): Promise<boolean> {
      const rows = await sql`
        update actions.ciba_requests set issued_at = now(), last_polled_at = now()
        where auth_req_id = ${authReqId} and issued_at is null
        returning auth_req_id`;
      return rows.length === 1;
    },

    /** The ping-mode request of an agent's action request, or undefined. */
    async pingOf(agentId: string, actionId: string): Promise<CibaRequestRow | undefined> {
      const [row] = await sql<CibaRequestRow[]>`
        select auth_req_id, action_id, agent_id, account_id, mode, interval_seconds, notification_token_enc,
          expires_at, issued_at
        from actions.ciba_requests where action_id = ${actionId} and agent_id = ${agentId} and mode = 'ping'`;
      return row;
    },

    /** Forgets up to `batch` requests a day past their expiry (the action requests themselves stay). */
    async prune(batch: number): Promise<number> {
      const rows = await sql`
        delete from actions.ciba_requests where auth_req_id in (
          select auth_req_id from actions.ciba_requests where expires_at < now() - interval '1 day' limit ${batch})
        returning auth_req_id`;
      return rows.length;
    },

    /** An agent of the account (not revoked) with its ping endpoint; undefined for another account's or none. */
    async client(accountId: string, agentId: string): Promise<CibaClientRow | undefined> {
      const [row] = await sql<CibaClientRow[]>`
        select a.id as agent_id, a.name, c.notification_endpoint
        from actions.agents a left join actions.ciba_clients c on c.agent_id = a.id
        where a.id = ${agentId} and a.account_id = ${accountId} and a.revoked_at is null`;
      return row;
    },

    /** Sets or clears an agent's ping endpoint. */
    async setEndpoint(agentId: string, endpoint: string | null): Promise<void> {
      if (endpoint === null) await sql`delete from actions.ciba_clients where agent_id = ${agentId}`;
      else
        await sql`
          insert into actions.ciba_clients (agent_id, notification_endpoint) values (${agentId}, ${endpoint})
          on conflict (agent_id) do update set notification_endpoint = excluded.notification_endpoint,
            updated_at = now()`;
    },
  };
}
export type CibaStore = ReturnType<typeof createCibaStore>;
