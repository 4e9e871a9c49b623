import type { Sql } from '@agent-auth/db';
import type { AuthorizationRow } from '../domain/rows.js';

export type NewAuthorization = Pick<
  AuthorizationRow,
  | 'id'
  | 'client_id'
  | 'redirect_uri'
  | 'redirect_uri_given'
  | 'code_challenge'
  | 'state'
  | 'scope'
  | 'resource'
  | 'issuer'
>;

/** Authorization requests, the holder's answers and their single-use codes (times are the database's). */
export function createAuthorizationStore(sql: Sql) {
  return {
    async insert(request: NewAuthorization, answerWithinSeconds: number): Promise<void> {
      await sql`
        insert into identity.oauth_authorizations (id, client_id, redirect_uri, redirect_uri_given, code_challenge,
          state, scope, resource, issuer, expires_at)
        values (${request.id}, ${request.client_id}, ${request.redirect_uri}, ${request.redirect_uri_given},
          ${request.code_challenge}, ${request.state}, ${request.scope}, ${request.resource}, ${request.issuer},
          now() + make_interval(secs => ${answerWithinSeconds}))`;
    },

    /** A request still waiting for the holder's answer: undefined once expired; `decided` once answered. */
    async pending(id: string): Promise<{ row: AuthorizationRow; decided: boolean } | undefined> {
      const [row] = await sql<AuthorizationRow[]>`
        select * from identity.oauth_authorizations where id = ${id} and expires_at > now()`;
      return row && { row, decided: row.decided_at !== null };
    },

    /**
     * Records the holder's answer once: with a code's hash (valid `codeSeconds`) when allowed. False when the request
     * was answered meanwhile or expired.
     */
    async decide(
      id: string,
      decidedBy: string,
      answer: { account_id: string; agent_id: string; code_hash: string; codeSeconds: number } | null,
    ): Promise<boolean> {
      const rows = await sql`
        update identity.oauth_authorizations set decided_at = now(), decided_by = ${decidedBy},
          account_id = ${answer?.account_id ?? null}, agent_id = ${answer?.agent_id ?? null},
          code_hash = ${answer?.code_hash ?? null},
          code_expires_at = ${answer ? sql`now() + make_interval(secs => ${answer.codeSeconds})` : null}
        where id = ${id} and decided_at is null and expires_at > now()
        returning id`;
      return rows.length === 1;
    },

    /**
     * Uses a code: once. `fresh` when this call used it and it had not expired; `replayed` when it had been used
     * before (its connection is then to be ended); undefined for a code never given out.
     */
    async useCode(
      codeHash: string,
    ): Promise<
      | { outcome: 'fresh' | 'expired'; row: AuthorizationRow }
      | { outcome: 'replayed'; row: AuthorizationRow }
      | undefined
    > {
      const [used] = await sql<Array<AuthorizationRow & { fresh: boolean }>>`
        update identity.oauth_authorizations set code_used_at = now()
        where code_hash = ${codeHash} and code_used_at is null
        returning *, code_expires_at > now() as fresh`;
      if (used) {
        const { fresh, ...row } = used;
        return { outcome: fresh ? 'fresh' : 'expired', row };
      }
      const [earlier] = await sql<AuthorizationRow[]>`
        select * from identity.oauth_authorizations where code_hash = ${codeHash}`;
      return earlier && { outcome: 'replayed', row: earlier };
    },

    /** Deletes requests older than a day: their codes lived a minute, so nothing can use them any more. */
    async prune(): Promise<number> {
      const rows = await sql`
        delete from identity.oauth_authorizations where created_at < now() - interval '1 day' returning id`;
      return rows.length;
    },
  };
}
export type AuthorizationStore = ReturnType<typeof createAuthorizationStore>;
