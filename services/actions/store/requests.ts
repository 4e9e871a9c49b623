import type { ActionEventInput, QuorumApproval } from '@agent-auth/contracts';
import { gatherWrites, isStatementRefused, type Sql, type WriteGathering } from '@agent-auth/db';
import type { AuditEntry, PendingHead, PendingRow, RequestRow } from '../domain/rows.js';
import { announce, eventsOf, selectWithEvents, type OutboxRow } from './outbox.js';
import { insertGatheredCreates, type RequestInsert } from './request-inserts.js';
import { pendingIdFloor } from '../domain/list-segments.js';
import { createAgentListWalk } from './request-list.js';

/** A request that leaves pending by expiry, with the receipt signed for it. */
export interface Expiry {
  id: string;
  resolved_at: Date;
  receipt: string | null;
}

/** A row as a request-changing statement returns it, with the outbox event it wrote (selectWithEvents). */
export type Announcing = RequestRow & { outbox_event?: OutboxRow | null };

/** How creates share statements (gatherWrites): statements out at once, most creates in one, longest wait for one. */
export type CreateGathering = Pick<WriteGathering<RequestInsert, unknown>, 'inFlight' | 'maxBatch' | 'overdueMs'>;

/**
 * Persistence of action requests; every state change writes its audit entry and its outbox event in the same
 * statement, which returns the event with the row. `announced` is handed the events of a statement once it has
 * committed (each statement here commits on its own): the outbox relay publishes them at once.
 */
export function createRequestStore(
  sql: Sql,
  announced: (events: ActionEventInput[]) => void = () => {},
  // A create waits at most 3 ms behind a statement out before it takes a further one: paced at half the all-in-one
  // process's rate, p99 of the second 10 s run 34-50 ms without it, 13-20 ms with it (1 ms: 27-32, 6 ms: 12-46).
  creates: CreateGathering = { inFlight: 4, maxBatch: 32, overdueMs: 3 },
) {
  const afterward = (result: Announcing[]): RequestRow[] => {
    const { rows, events } = eventsOf(result);
    if (events.length) announced(events);
    return rows;
  };
  const gatherCreate = gatherWrites<RequestInsert, RequestRow | undefined>({
    // A statement's events are announced together, once it has committed.
    write: async (inserts) => {
      const stored = await insertGatheredCreates(sql, inserts);
      const events = stored.flatMap((s) => (s ? [s.event] : []));
      if (events.length) announced(events);
      return stored.map((s) => s?.row);
    },
    ...creates,
    retryAlone: isStatementRefused,
    sameStatement: (a, b) => a.freeQuota === b.freeQuota,
  });
  return {
    /**
     * Counts a new request against its account's month and inserts it with its audit entries and its outbox event,
     * atomically: the create path's one round trip, shared with the creates that came while others were out
     * (gatherWrites). Undefined (nothing written) when the free plan's quota is used up.
     */
    async insertWithinQuota(create: RequestInsert): Promise<RequestRow | undefined> {
      return gatherCreate(create);
    },

    /** A request of one agent, or undefined. */
    async findForAgent(id: string, agentId: string): Promise<RequestRow | undefined> {
      const [row] = await sql<RequestRow[]>`select * from actions.requests where id = ${id} and agent_id = ${agentId}`;
      return row;
    },

    /** A request of one account, or undefined. */
    async findForAccount(id: string, accountId: string): Promise<RequestRow | undefined> {
      const [row] = await sql<
        RequestRow[]
      >`select * from actions.requests where id = ${id} and account_id = ${accountId}`;
      return row;
    },

    /**
     * One agent's requests, newest first, after `after` when given (a cursor: the last row of the previous page).
     * Each filter walks its own index (migration 011) and stops after `limit` rows; on the partitioned table, month
     * by month from the newest (request-list.ts). `position` is the row's place in that order, to the microsecond,
     * for the next cursor.
     */
    listForAgent: createAgentListWalk(sql),

    /**
     * The account's pending, unexpired requests in list order: the id and the things that change while a request
     * is pending (its quorum's approvals, its escalation). Everything else of an entry is fixed once created (pendingRows).
     */
    async pendingHeads(accountId: string, limit: number, names: readonly string[]): Promise<PendingHead[]> {
      // Only the months a pending request can lie in are read (each partition's index of pending requests). Only
      // what is routed to the asking member (`names`: their id and role:<role>): domain/routing.ts mayAnswer.
      return sql<PendingHead[]>`
        select r.id, r.quorum_approvals, r.escalated_at from actions.requests r
        where r.account_id = ${accountId} and r.status = 'pending' and r.expires_at > now()
          and r.id >= ${pendingIdFloor(Date.now())}
          and (r.approvers is null or r.approvers && ${names as string[]}::text[]
            or (r.escalated_at is not null and r.escalate_to && ${names as string[]}::text[]))
        order by r.risk_rank desc, r.created_at asc, r.id asc
        limit ${limit}`;
    },

    /** The pending list's columns of these requests (a device reads hundreds of entries: only what it shows). */
    async pendingRows(ids: string[]): Promise<PendingRow[]> {
      return sql<PendingRow[]>`
        select r.id, r.agent_id, r.action_type, r.title, r.description, r.risk_level, r.reversible, r.amount_cents,
          r.currency, r.recipient, r.metadata_enc, r.content_hash, r.created_at, r.expires_at,
          r.quorum_required, r.approvers, r.escalate_at, r.escalate_to, r.escalated_at, a.name as agent_name
        from actions.requests r join actions.agents a on a.id = r.agent_id
        where r.id = any(${ids})`;
    },

    /**
     * Moves a pending, unexpired request to a final status; undefined when it was not pending any more.
     * The conditional update is what makes exactly one of two racing devices win.
     */
    async resolve(
      id: string,
      accountId: string,
      change: {
        status: 'approved' | 'denied';
        resolved_by: string;
        reason?: string | null;
        user_verified?: boolean;
        passkey_id?: string | null;
        resolved_at: Date;
        receipt: string | null;
        /** Approved with changes: the edited tool input, sealed, and its digest. */
        updated_input_enc?: string | null;
        updated_input_hash?: string | null;
      },
      audit: AuditEntry,
    ): Promise<RequestRow | undefined> {
      const rows = await sql<Announcing[]>`
        with changed as (
          update actions.requests set status = ${change.status}, resolved_by = ${change.resolved_by},
            resolved_at = ${change.resolved_at}, reason = ${change.reason ?? null}, receipt = ${change.receipt},
            user_verified = ${change.user_verified ?? false}, passkey_id = ${change.passkey_id ?? null},
            updated_input_enc = ${change.updated_input_enc ?? null},
            updated_input_hash = ${change.updated_input_hash ?? null}
          where id = ${id} and account_id = ${accountId} and status = 'pending' and expires_at > now()
          returning *
        ), logged as (
          insert into actions.audit_events (request_id, account_id, event, actor, detail)
          select id, account_id, ${audit.event}, ${audit.actor}, ${sql.json((audit.detail ?? {}) as never)} from changed
        ), announced as (${announce(sql, 'changed')})
        ${selectWithEvents(sql, 'changed')}`;
      return afterward(rows)[0];
    },

    /**
     * The agent withdraws its own pending request: `cancelled`, resolved by `agent`, with its receipt and audit entry
     * and its event (webhook, streams), in one statement; undefined when it was not pending any more.
     */
    async cancel(
      id: string,
      agentId: string,
      change: { resolved_at: Date; receipt: string | null },
      audit: AuditEntry,
    ): Promise<RequestRow | undefined> {
      const rows = await sql<Announcing[]>`
        with changed as (
          update actions.requests set status = 'cancelled', resolved_by = 'agent', resolved_at = ${change.resolved_at},
            receipt = ${change.receipt}
          where id = ${id} and agent_id = ${agentId} and status = 'pending'
          returning *
        ), logged as (
          insert into actions.audit_events (request_id, account_id, event, actor, detail)
          select id, account_id, ${audit.event}, ${audit.actor}, ${sql.json((audit.detail ?? {}) as never)} from changed
        ), announced as (${announce(sql, 'changed')})
        ${selectWithEvents(sql, 'changed')}`;
      return afterward(rows)[0];
    },

    /**
     * Adds one device's approval to a pending request under a quorum rule, with its audit entry, unless that device
     * or its member approved it already or the quorum is complete: undefined then (or when it is not pending). The
     * conditional update is what lets exactly one approval complete the quorum, however many race.
     */
    async addQuorumApproval(
      id: string,
      accountId: string,
      approval: QuorumApproval,
      audit: AuditEntry,
    ): Promise<RequestRow | undefined> {
      const [row] = await sql<RequestRow[]>`
        with changed as (
          update actions.requests set quorum_approvals = quorum_approvals || ${sql.json([approval] as never)}::jsonb
          where id = ${id} and account_id = ${accountId} and status = 'pending' and expires_at > now()
            and quorum_required is not null and jsonb_array_length(quorum_approvals) < quorum_required
            and not quorum_approvals @> ${sql.json([{ device_id: approval.device_id }] as never)}::jsonb
            and not quorum_approvals @> ${sql.json([{ member_id: approval.member_id }] as never)}::jsonb
          returning *
        ), logged as (
          insert into actions.audit_events (request_id, account_id, event, actor, detail)
          select id, account_id, ${audit.event}, ${audit.actor}, ${sql.json((audit.detail ?? {}) as never)} from changed
        )
        select * from changed`;
      return row;
    },

    /** Takes a device's quorum approval back off a still pending request (its completing approval failed). */
    async dropQuorumApproval(id: string, accountId: string, deviceId: string): Promise<void> {
      await sql`
        update actions.requests set quorum_approvals = coalesce((
          select jsonb_agg(e order by n) from jsonb_array_elements(quorum_approvals) with ordinality as a(e, n)
          where e->>'device_id' <> ${deviceId}), '[]'::jsonb)
        where id = ${id} and account_id = ${accountId} and status = 'pending'`;
    },

    /** Expires one request if it is pending and overdue (lazy expiry on read); returns the row as it now is. */
    async expireIfDue(expiry: Expiry): Promise<RequestRow | undefined> {
      const rows = await sql<Announcing[]>`
        with changed as (
          update actions.requests set status = 'expired', resolved_by = 'system', resolved_at = ${expiry.resolved_at},
            receipt = ${expiry.receipt}
          where id = ${expiry.id} and status = 'pending' and expires_at <= now()
          returning *
        ), logged as (
          insert into actions.audit_events (request_id, account_id, event, actor, detail)
          select id, account_id, 'expired', 'system', jsonb_strip_nulls(jsonb_build_object('receipt', receipt)) from changed
        ), announced as (${announce(sql, 'changed')})
        ${selectWithEvents(sql, 'changed')}`;
      return afterward(rows)[0];
    },

    /** Up to `batch` pending requests past their expiry, oldest expiry first (the sweeper signs their receipts). */
    async overdue(batch: number): Promise<RequestRow[]> {
      return sql<RequestRow[]>`
        select * from actions.requests where status = 'pending' and expires_at <= now() order by expires_at limit ${batch}`;
    },

    /**
     * Expires the given overdue requests with their receipts, each only if it is still pending: safe to run from
     * every replica at once, and beside lazy expiry (one of them wins each request).
     */
    async expireAll(expiries: Expiry[]): Promise<RequestRow[]> {
      if (!expiries.length) return [];
      const rows = await sql<Announcing[]>`
        with due as (
          select * from unnest(${expiries.map((e) => e.id)}::text[], ${expiries.map((e) => e.resolved_at.toISOString())}::timestamptz[],
            ${expiries.map((e) => e.receipt) as string[]}::text[]) as d(id, resolved_at, receipt)
        ), changed as (
          update actions.requests r set status = 'expired', resolved_by = 'system', resolved_at = due.resolved_at,
            receipt = due.receipt
          from due where r.id = due.id and r.status = 'pending' and r.expires_at <= now()
          returning r.*
        ), logged as (
          insert into actions.audit_events (request_id, account_id, event, actor, detail)
          select id, account_id, 'expired', 'system', jsonb_strip_nulls(jsonb_build_object('receipt', receipt)) from changed
        ), announced as (${announce(sql, 'changed')})
        ${selectWithEvents(sql, 'changed')}`;
      return afterward(rows);
    },

    /**
     * Appends a webhook delivery attempt to a request's audit trail, once: a retried report of the same attempt
     * (same webhook id and attempt number) adds nothing. False when the request is unknown or it was there already.
     */
    async auditWebhookAttempt(
      requestId: string,
      event: string,
      detail: { webhook_id: string; attempt: number } & Record<string, unknown>,
    ): Promise<boolean> {
      const rows = await sql`
        insert into actions.audit_events (request_id, account_id, event, actor, detail)
        select r.id, r.account_id, ${event}, 'notifier', ${sql.json(detail as never)} from actions.requests r
        where r.id = ${requestId} and not exists (
          select 1 from actions.audit_events e where e.request_id = ${requestId}
            and e.detail->>'webhook_id' = ${detail.webhook_id} and (e.detail->>'attempt')::int = ${detail.attempt})
        returning id`;
      return rows.length === 1;
    },

    /**
     * Marks an agent's approved vault execution request as executing by one claim, unless it already is; undefined
     * when it is not (yet, or any more) executable. The conditional update is what makes a request run at most once.
     * The same claim repeated (its first answer lost) gets the request back, with no second audit entry.
     */
    async claimExecution(
      id: string,
      agentId: string,
      claimId: string,
      audit: AuditEntry,
    ): Promise<RequestRow | undefined> {
      const [row] = await sql<RequestRow[]>`
        with claimed as (
          update actions.requests set execution_started_at = now(), execution_claim_id = ${claimId}
          where id = ${id} and agent_id = ${agentId} and status = 'approved' and content_hash is not null
            and execution_started_at is null
          returning *
        ), logged as (
          insert into actions.audit_events (request_id, account_id, event, actor, detail)
          select id, account_id, ${audit.event}, ${audit.actor}, ${sql.json((audit.detail ?? {}) as never)} from claimed
        )
        select * from claimed
        union all
        select * from actions.requests
        where id = ${id} and agent_id = ${agentId} and status = 'approved' and execution_claim_id = ${claimId}
          and not exists (select 1 from claimed)`;
      return row;
    },

    /** The recorded outcome of a request's latest execution (executed / execution_failed), if one was recorded. */
    async executionOutcome(
      id: string,
    ): Promise<{ event: string; detail: Record<string, unknown>; at: Date } | undefined> {
      const [row] = await sql<Array<{ event: string; detail: Record<string, unknown>; at: Date }>>`
        select event, detail, at from actions.audit_events
        where request_id = ${id} and event in ('executed', 'execution_failed')
        order by id desc limit 1`;
      return row;
    },

    /** Undoes a claim whose call never reached the upstream, so the approved request can run once more. */
    async releaseExecution(id: string, agentId: string, claimId: string, audit: AuditEntry): Promise<boolean> {
      const rows = await sql`
        with released as (
          update actions.requests set execution_started_at = null, execution_claim_id = null
          where id = ${id} and agent_id = ${agentId} and status = 'approved' and execution_started_at is not null
            and execution_claim_id = ${claimId}
          returning id, account_id
        )
        insert into actions.audit_events (request_id, account_id, event, actor, detail)
        select id, account_id, ${audit.event}, ${audit.actor}, ${sql.json((audit.detail ?? {}) as never)} from released
        returning 1`;
      return rows.length > 0;
    },

    /** Appends one audit entry to a request's trail. */
    async appendAudit(id: string, accountId: string, audit: AuditEntry): Promise<void> {
      await sql`
        insert into actions.audit_events (request_id, account_id, event, actor, detail)
        values (${id}, ${accountId}, ${audit.event}, ${audit.actor}, ${sql.json((audit.detail ?? {}) as never)})`;
    },

    /**
     * Appends one audit entry to a request of one agent, in one statement; false when the agent has no such request.
     * With `flush: false` the commit does not wait for the WAL flush (synchronous_commit off for this transaction
     * only): the entry is visible to every reader at once and lost only if Postgres itself crashes in the next
     * moment, for records whose loss the process crashing just before writing them would equally cause.
     */
    async appendAuditForAgent(
      id: string,
      agentId: string,
      audit: AuditEntry,
      options: { flush: boolean } = { flush: true },
    ): Promise<boolean> {
      const rows = await sql`
        with commit_mode as (select set_config('synchronous_commit', ${options.flush ? 'on' : 'off'}, true))
        insert into actions.audit_events (request_id, account_id, event, actor, detail)
        select id, account_id, ${audit.event}, ${audit.actor}, ${sql.json((audit.detail ?? {}) as never)}
        from actions.requests, commit_mode where id = ${id} and agent_id = ${agentId}
        returning id`;
      return rows.length > 0;
    },
  };
}
export type RequestStore = ReturnType<typeof createRequestStore>;
