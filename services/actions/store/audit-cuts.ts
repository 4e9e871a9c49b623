import type { Sql } from '@agent-auth/db';

/** An account's last event among those a cut drops: what its checkpoint signs. */
export interface CutHead {
  account_id: string;
  seq: number;
  hash: string;
  at: string;
}

/** What one month's cut did: how many accounts' checkpoints it stored, or why it did nothing. */
export type CutOutcome = { checkpoints: number } | { held: 'unsealed events' };

/** A month's suffix as the partitions are named (audit_events_m2026_01, audit_chain_m2026_01; _older). */
const MONTH = /^(m\d{4}_\d{2}|older)$/;

// The drop waits for every statement on the audit tables and holds new ones behind it: past this it gives up and
// the next pass tries again, rather than queue the request path behind a long read.
const LOCK_TIMEOUT = '2s';

/**
 * Retention of the audit trail (migration 065): its events and their places in the chain are partitioned by the
 * same months, and a month goes only with a checkpoint per account stored in the same transaction.
 */
export function createAuditCutStore(sql: Sql) {
  return {
    /** The months whose audit events were all written more than `days` ago, oldest first (once both are partitioned). */
    async due(days: number): Promise<string[]> {
      const rows = await sql<Array<{ name: string }>>`
        select name from actions.partitions_before('audit_events', now() - make_interval(days => ${days}))
        where (select count(*) from pg_class
               where oid in ('actions.audit_events'::regclass, 'actions.audit_chain'::regclass) and relkind = 'p') = 2`;
      return rows.map((r) => r.name.slice('audit_events_'.length));
    },

    /**
     * Cuts one month, in one transaction with writes into it held off: nothing if an event of it is not sealed yet;
     * otherwise each account's last place in it, signed by `sign`, becomes the account's checkpoint (unless the
     * account's is later already), and the month's events and places are dropped.
     */
    async cut(month: string, sign: (head: CutHead) => Promise<string>): Promise<CutOutcome> {
      if (!MONTH.test(month)) throw new Error(`not an audit month: ${month}`);
      const events = `actions.audit_events_${month}`;
      const places = `actions.audit_chain_${month}`;
      return sql.begin(async (tx) => {
        await tx.unsafe(`set local lock_timeout = '${LOCK_TIMEOUT}'`);
        await tx.unsafe(`lock table ${events}, ${places} in share mode`);
        const [open] = await tx.unsafe<Array<{ unsealed: boolean }>>(`
          select exists (select from ${events} e
            where (e.tx, e.id) > ((select sealed_tx from actions.audit_horizon), (select sealed_id from actions.audit_horizon))
          ) as unsealed`);
        if (open!.unsealed) return { held: 'unsealed events' } as const;
        const lasts = await tx.unsafe<Array<{ account_id: string; seq: string; hash: string; at: Date }>>(`
          select distinct on (c.account_id) c.account_id, c.seq, c.hash, e.at
          from ${places} c join ${events} e on e.id = c.event_id
          order by c.account_id, c.seq desc`);
        const heads = lasts.map((l) => ({
          account_id: l.account_id,
          seq: Number(l.seq),
          hash: l.hash,
          at: l.at.toISOString(),
        }));
        const signatures: string[] = [];
        for (const head of heads) signatures.push(await sign(head));
        await tx`
          insert into actions.audit_checkpoints (account_id, seq, hash, at, signature)
          select * from unnest(${heads.map((h) => h.account_id)}::text[], ${heads.map((h) => String(h.seq))}::bigint[],
            ${heads.map((h) => h.hash)}::text[], ${heads.map((h) => h.at)}::timestamptz[], ${signatures}::text[])
          on conflict (account_id) do update
            set seq = excluded.seq, hash = excluded.hash, at = excluded.at, signature = excluded.signature, cut_at = now()
            where audit_checkpoints.seq < excluded.seq`;
        await tx.unsafe(`drop table ${events}, ${places}`);
        return { checkpoints: heads.length };
      });
    },
  };
}
export type AuditCutStore = ReturnType<typeof createAuditCutStore>;
