import type { Sql } from '@agent-auth/db';
import type { NewRule } from '@agent-auth/contracts';
import type { RuleRow } from '../domain/rows.js';

type RawRule = Omit<RuleRow, 'amount_max_cents'> & { amount_max_cents: string | null };

// bigint arrives as text; rule caps are at most 1e11 cents, well inside a double's exact range.
const toRow = (r: RawRule): RuleRow => ({
  ...r,
  amount_max_cents: r.amount_max_cents === null ? null : Number(r.amount_max_cents),
});

/** Persistence of an account's rules, in creation order. */
export function createRuleStore(sql: Sql) {
  const COLUMNS = sql.unsafe(`id, account_id, name, decision, action_type, agent_id, risk_level_max, amount_max_cents,
    quorum, conditions, approvers, escalate_after_seconds, escalate_to, created_at`);
  return {
    /** Inserts a rule unless the account already has `cap` rules; undefined when it has. */
    async insert(
      id: string,
      accountId: string,
      rule: Omit<NewRule, 'device'>,
      cap: number,
    ): Promise<RuleRow | undefined> {
      const [row] = await sql<RawRule[]>`
        insert into policy.rules (id, account_id, name, decision, action_type, agent_id, risk_level_max, amount_max_cents,
          quorum, conditions, approvers, escalate_after_seconds, escalate_to)
        select ${id}, ${accountId}, ${rule.name}, ${rule.decision}, ${rule.action_type}, ${rule.agent_id},
               ${rule.risk_level_max}, ${rule.amount_max_cents}, ${rule.quorum},
               ${rule.conditions === null ? null : sql.json(rule.conditions as never)},
               ${rule.approvers}::text[], ${rule.escalate_after_seconds}, ${rule.escalate_to}::text[]
        where (select count(*) from policy.rules where account_id = ${accountId}) < ${cap}
        returning ${COLUMNS}`;
      return row && toRow(row);
    },

    /** An account's rules in the order they are evaluated. */
    async list(accountId: string): Promise<RuleRow[]> {
      const rows = await sql<RawRule[]>`
        select ${COLUMNS}
        from policy.rules where account_id = ${accountId} order by seq`;
      return rows.map(toRow);
    },

    /** Deletes a rule of the account; false when the account has no such rule. */
    async delete(accountId: string, id: string): Promise<boolean> {
      const rows = await sql`delete from policy.rules where id = ${id} and account_id = ${accountId} returning id`;
      return rows.length === 1;
    },
  };
}
export type RuleStore = ReturnType<typeof createRuleStore>;
