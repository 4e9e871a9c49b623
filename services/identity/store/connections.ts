import type { Sql } from '@agent-auth/db';
import type { ConnectionRow } from '../domain/rows.js';

/** A token to store: its hash and how many seconds it lives. */
export interface TokenToStore {
  hash: string;
  seconds: number;
}

export interface NewConnection {
  id: string;
  account_id: string;
  agent_id: string;
  client_id: string;
  resource: string;
  scope: string | null;
  consented_by: string;
  /** The authorization whose code made it. */
  authorization_id: string;
}

/** What became of a refresh token presented for rotation. */
export type Rotation =
  | { outcome: 'rotated'; connection: ConnectionRow }
  /** It had been used before: a replay. */
  | { outcome: 'replayed'; connection_id: string }
  /** Unknown, past its expiry, or of a connection that ended or is another client's. */
  | { outcome: 'unknown' | 'expired' | 'revoked' };

/** Connections (granted consents) and their access and refresh tokens; a revoked connection's tokens are deleted. */
export function createConnectionStore(sql: Sql) {
  const insertTokens = async (tx: Sql, connectionId: string, access: TokenToStore, refresh: TokenToStore) => {
    await tx`insert into identity.oauth_access_tokens (hash, connection_id, expires_at)
             values (${access.hash}, ${connectionId}, now() + make_interval(secs => ${access.seconds}))`;
    await tx`insert into identity.oauth_refresh_tokens (hash, connection_id, expires_at)
             values (${refresh.hash}, ${connectionId}, now() + make_interval(secs => ${refresh.seconds}))`;
  };

  return {
    /** Opens a connection with its first tokens, and notes it on the authorization whose code made it. */
    async open(connection: NewConnection, access: TokenToStore, refresh: TokenToStore): Promise<ConnectionRow> {
      return sql.begin(async (tx) => {
        const [row] = await tx<ConnectionRow[]>`
          insert into identity.oauth_connections (id, account_id, agent_id, client_id, resource, scope, consented_by)
          values (${connection.id}, ${connection.account_id}, ${connection.agent_id}, ${connection.client_id},
            ${connection.resource}, ${connection.scope}, ${connection.consented_by})
          returning *`;
        await insertTokens(tx as unknown as Sql, connection.id, access, refresh);
        await tx`update identity.oauth_authorizations set connection_id = ${connection.id}
                 where id = ${connection.authorization_id}`;
        return row!;
      }) as Promise<ConnectionRow>;
    },

    /** Uses a refresh token once and stores the next pair, if it is live and the client's own. */
    async rotate(
      refreshHash: string,
      clientId: string,
      access: TokenToStore,
      refresh: TokenToStore,
    ): Promise<Rotation> {
      return sql.begin(async (tx) => {
        const [used] = await tx<Array<{ connection_id: string; fresh: boolean }>>`
          update identity.oauth_refresh_tokens set used_at = now()
          where hash = ${refreshHash} and used_at is null
          returning connection_id, expires_at > now() as fresh`;
        if (!used) {
          const [earlier] = await tx<Array<{ connection_id: string }>>`
            select connection_id from identity.oauth_refresh_tokens where hash = ${refreshHash}`;
          return earlier ? { outcome: 'replayed', connection_id: earlier.connection_id } : { outcome: 'unknown' };
        }
        const [connection] = await tx<ConnectionRow[]>`
          update identity.oauth_connections set refreshed_at = now()
          where id = ${used.connection_id} and revoked_at is null and client_id = ${clientId}
          returning *`;
        if (!connection) return { outcome: 'revoked' };
        if (!used.fresh) return { outcome: 'expired' };
        await insertTokens(tx as unknown as Sql, connection.id, access, refresh);
        return { outcome: 'rotated', connection };
      }) as Promise<Rotation>;
    },

    /** The live connection of an access token, with the token's expiry. */
    async ofAccessToken(
      accessHash: string,
    ): Promise<{ connection: ConnectionRow; expires_at: Date; expired: boolean } | undefined> {
      const [row] = await sql<Array<ConnectionRow & { token_expires_at: Date; expired: boolean }>>`
        select c.*, t.expires_at as token_expires_at, t.expires_at <= now() as expired
        from identity.oauth_access_tokens t join identity.oauth_connections c on c.id = t.connection_id
        where t.hash = ${accessHash} and c.revoked_at is null`;
      if (!row) return undefined;
      const { token_expires_at, expired, ...connection } = row;
      return { connection, expires_at: token_expires_at, expired };
    },

    /** The connection a refresh token belongs to (for its revocation). */
    async ofRefreshToken(refreshHash: string): Promise<ConnectionRow | undefined> {
      const [row] = await sql<ConnectionRow[]>`
        select c.* from identity.oauth_refresh_tokens t join identity.oauth_connections c on c.id = t.connection_id
        where t.hash = ${refreshHash}`;
      return row;
    },

    /** Ends a live connection (of the account, when given) and deletes its tokens; undefined if none was live. */
    async revoke(connectionId: string, reason: string, accountId?: string): Promise<ConnectionRow | undefined> {
      return sql.begin(async (tx) => {
        const [row] = await tx<ConnectionRow[]>`
          update identity.oauth_connections set revoked_at = now(), revoked_reason = ${reason}
          where id = ${connectionId} and revoked_at is null
            ${accountId === undefined ? tx`` : tx`and account_id = ${accountId}`}
          returning *`;
        if (!row) return undefined;
        await tx`delete from identity.oauth_access_tokens where connection_id = ${connectionId}`;
        await tx`delete from identity.oauth_refresh_tokens where connection_id = ${connectionId}`;
        return row;
      }) as Promise<ConnectionRow | undefined>;
    },

    /** The live connections of an agent (to end them when the agent is revoked). */
    async liveOfAgent(agentId: string): Promise<string[]> {
      const rows = await sql<Array<{ id: string }>>`
        select id from identity.oauth_connections where agent_id = ${agentId} and revoked_at is null`;
      return rows.map((r) => r.id);
    },

    /** Deletes one access token (its connection lives on). */
    async deleteAccessToken(accessHash: string): Promise<boolean> {
      const rows = await sql`delete from identity.oauth_access_tokens where hash = ${accessHash} returning hash`;
      return rows.length === 1;
    },

    /** The account's live connections, newest first. */
    async listLive(accountId: string): Promise<ConnectionRow[]> {
      return sql<ConnectionRow[]>`
        select * from identity.oauth_connections where account_id = ${accountId} and revoked_at is null
        order by created_at desc limit 200`;
    },

    /** Deletes expired tokens and connections revoked a month ago; how many rows went. */
    async prune(): Promise<number> {
      const access = await sql`
        delete from identity.oauth_access_tokens where expires_at < now() - interval '1 hour' returning hash`;
      const refresh = await sql`
        delete from identity.oauth_refresh_tokens where expires_at < now() returning hash`;
      const revoked = await sql`
        delete from identity.oauth_connections where revoked_at < now() - interval '30 days' returning id`;
      return access.length + refresh.length + revoked.length;
    },
  };
}
export type ConnectionStore = ReturnType<typeof createConnectionStore>;
