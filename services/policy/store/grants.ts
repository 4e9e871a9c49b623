import type { CreateGrantRequest } from '@agent-auth/contracts';
import type { Sql } from '@agent-auth/db';
import { type GrantMatchColumns, grantMatchOf } from '../domain/grant-matching.js';
import type { GrantRow } from '../domain/rows.js';

type RawGrant = Omit<GrantRow, 'max_amount_cents' | 'spent_cents' | 'match'> &
  GrantMatchColumns & {
    max_amount_cents: string | null;
    spent_cents: string;
  };

// bigint arrives as text; grant amounts are at most 1e11 cents, well inside a double's exact range.
const toRow = ({ match_tool_name, match_session_id, match_command_prefix, ...r }: RawGrant): GrantRow => ({
  ...r,
  max_amount_cents: r.max_amount_cents === null ? null : Number(r.max_amount_cents),
  spent_cents: Number(r.spent_cents),
  match: grantMatchOf({ match_tool_name, match_session_id, match_command_prefix }),
});

/** Persistence of standing grants; their use is counted by policy.use_grant (spend.ts). */
export function createGrantStore(sql: Sql) {
  return {
    /** Inserts a grant; a second creation from the same approval returns the first grant instead. */
    async insert(grant: CreateGrantRequest): Promise<GrantRow> {
      const match = grant.match ?? null;
      const [row] = await sql<RawGrant[]>`
        with inserted as (
          insert into policy.grants (id, account_id, agent_id, action_type, recipient, currency, expires_at,
            max_amount_cents, max_uses, created_from, match_tool_name, match_session_id, match_command_prefix)
          values (${grant.grant_id}, ${grant.account_id}, ${grant.agent_id}, ${grant.action_type}, ${grant.recipient},
            ${grant.currency}, now() + make_interval(secs => ${grant.duration_seconds}), ${grant.max_amount_cents},
            ${grant.max_uses}, ${grant.created_from}, ${match?.tool_name ?? null}, ${match?.session_id ?? null},
            ${match?.command_prefix ?? null})
          on conflict (created_from) do nothing
          returning *
        )
        select * from inserted
        union all
        select * from policy.grants where created_from = ${grant.created_from} and account_id = ${grant.account_id}
          and not exists (select 1 from inserted)`;
      return toRow(row!);
    },

    /** An account's grants, newest first: live ones and those ended in the last 30 days. */
    async list(accountId: string): Promise<GrantRow[]> {
      const rows = await sql<RawGrant[]>`
        select * from policy.grants
        where account_id = ${accountId} and least(expires_at, coalesce(revoked_at, 'infinity')) > now() - interval '30 days'
        order by created_at desc, id desc limit 500`;
      return rows.map(toRow);
    },

    /** Revokes a grant of the account at once (a revoked grant stays revoked); undefined when there is none. */
    async revoke(accountId: string, id: string): Promise<GrantRow | undefined> {
      const [row] = await sql<RawGrant[]>`
        update policy.grants set revoked_at = coalesce(revoked_at, now())
        where id = ${id} and account_id = ${accountId}
        returning *`;
      return row && toRow(row);
    },
  };
}
export type GrantStore = ReturnType<typeof createGrantStore>;
