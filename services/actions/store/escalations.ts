import type { ActionEventInput } from '@agent-auth/contracts';
import type { Sql } from '@agent-auth/db';
import type { RequestRow } from '../domain/rows.js';
import type { Announcing } from './requests.js';
import { announce, eventsOf, selectWithEvents } from './outbox.js';

/** An escalation done: the request as it now is, and when it was due and done. */
export type Escalated = RequestRow & { escalate_at: Date; escalated_at: Date };

/**
 * The escalations of pending requests whose escalate_at has come (migration 080). Every replica's scheduler runs
 * them: the due rows are taken `for update skip locked` and marked escalated in the same statement, so each
 * request is escalated by exactly one replica, once, with its audit entry and its `action.escalated` event.
 */
export function createEscalationStore(sql: Sql, announced: (events: ActionEventInput[]) => void = () => {}) {
  return {
    /** Escalates up to `batch` due requests, oldest due first; answers those this call escalated. */
    async escalateDue(batch: number): Promise<Escalated[]> {
      const rows = await sql<Announcing[]>`
        with due as (
          select id from actions.requests
          where status = 'pending' and escalated_at is null and escalate_at is not null and escalate_at <= now()
            and expires_at > now()
          order by escalate_at limit ${batch}
          for update skip locked
        ), marked as (
          update actions.requests r set escalated_at = clock_timestamp()
          from due where r.id = due.id and r.status = 'pending' and r.escalated_at is null and r.expires_at > now()
          returning r.*
        ), changed as (
          -- Whom it goes to now: the members the rule's escalate_to names, by id or by role.
          select m.*, jsonb_build_object('escalate_at', m.escalate_at, 'escalated_at', m.escalated_at,
            'escalate_to', to_jsonb(m.escalate_to), 'members', coalesce((
              select jsonb_agg(jsonb_build_object('member_id', p.id, 'name', p.name, 'email', p.email) order by p.id)
              from actions.members p
              where p.account_id = m.account_id and p.removed_at is null
                and (p.id = any(m.escalate_to) or 'role:' || p.role = any(m.escalate_to))), '[]'::jsonb)
          ) as escalation
          from marked m
        ), logged as (
          insert into actions.audit_events (request_id, account_id, event, actor, detail)
          select id, account_id, 'escalated', 'system', escalation - 'members' || jsonb_build_object(
            'member_ids', (select coalesce(jsonb_agg(e->'member_id'), '[]'::jsonb) from jsonb_array_elements(escalation->'members') e))
          from changed
        ), announced as (${announce(sql, 'changed', false, true)})
        ${selectWithEvents(sql, 'changed')}`;
      const { rows: plain, events } = eventsOf(rows);
      if (events.length) announced(events);
      return plain as Escalated[];
    },

    /**
     * Milliseconds until the next escalation is due on the database's clock (0: one is due); null: none. A request
     * past its expiry is left out (it expires instead; the sweeper takes it out of the index).
     */
    async nextDueInMs(): Promise<number | null> {
      // Not greatest(0, …) in SQL: greatest ignores a NULL, and "none" would come back as "due now" (a scheduler
      // looking without pause).
      const [row] = await sql<Array<{ ms: number | null }>>`
        select (extract(epoch from min(escalate_at) - clock_timestamp()) * 1000)::float8 as ms
        from actions.requests
        where status = 'pending' and escalated_at is null and escalate_at is not null and expires_at > now()`;
      return row?.ms === null || row?.ms === undefined ? null : Math.max(0, row.ms);
    },
  };
}
export type EscalationStore = ReturnType<typeof createEscalationStore>;
