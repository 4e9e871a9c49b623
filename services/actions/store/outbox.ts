import {
  type ActionEventInput,
  type ActionSnapshot,
  actionOfSnapshot,
  newId,
  outcomeOfSnapshot,
} from '@agent-auth/contracts';
import type { Sql } from '@agent-auth/db';
import type { RequestRow } from '../domain/rows.js';

/** An outbox row as stored (or as the writing statement returns it, its time then a JSON string). */
export interface OutboxRow {
  id: string;
  type: ActionEventInput['type'];
  account_id: string;
  agent_id: string;
  callback_url: string | null;
  // Rows written before the snapshot (a deployment's last unpublished ones) hold the event's action itself; a
  // creating statement's rows hold none (null): their event is made of the request row (asCreated).
  action: ActionSnapshot | ActionEventInput['action'] | null;
  request_id?: string;
  created_at: Date | string;
  seq: string | number; // bigint arrives as text (a number inside JSON)
}

/**
 * How long the rows a statement writes stay claimed by their writer, which publishes them itself right after the
 * commit (OutboxRelay.committed): the relay takes over only a row its writer did not publish by then (it crashed,
 * or the stream was away).
 */
export const WRITER_LEASE_SECONDS = 5;

/**
 * The outbox rows a request-changing statement writes: one event per row of the CTE named `source`, in that same
 * statement, so a change and its announcement commit together or not at all. A row keeps a snapshot of the stored
 * columns (ActionSnapshot); the event's body is made of it in TypeScript, by the contract, when it is published.
 * The rows are born claimed by their writer for WRITER_LEASE_SECONDS and returned (the CTE's rows), so that the
 * statement can hand them back with its own result (`eventsOf`).
 *
 * `escalated`: an escalation's event (`action.escalated`), its snapshot with the CTE's `escalation` column.
 *
 * `byWriter`: the creating statement's events, whose ids its writer chose (its CTE `input`'s `event_id`) and whose
 * time is the request's creation: the writer makes each event of the row it sent (creationEventOf) and publishes it
 * without reading anything back, and a relay that takes the row over publishes the same event, made of the request
 * row as it was created (asCreated). So those rows keep no snapshot: it was a seventh of a create's WAL.
 */
export function announce(sql: Sql, source: string, byWriter = false, escalated = false) {
  return sql`
    insert into actions.outbox (${byWriter ? sql`id, created_at, ` : sql``}type, account_id, agent_id, request_id,
      callback_url, action, claimed_until)
    select ${byWriter ? sql`i.doc->>'event_id', c.created_at, ` : sql``}
      ${escalated ? sql`'action.escalated'` : sql`case when c.status = 'pending' then 'action.created' else 'action.resolved' end`},
      c.account_id, c.agent_id, c.id, c.callback_url,
      ${
        byWriter
          ? sql`null`
          : sql`jsonb_build_object('id', c.id, 'status', c.status, 'action_type', c.action_type, 'title', c.title,
        'risk_level', c.risk_level, 'amount_cents', c.amount_cents, 'currency', c.currency,
        'resolved_by', c.resolved_by, 'resolved_at', c.resolved_at, 'created_at', c.created_at,
        'expires_at', c.expires_at, 'receipt', c.receipt, 'reason', c.reason, 'user_verified', c.user_verified,
        'passkey_id', c.passkey_id, 'quorum_required', c.quorum_required, 'quorum_approvals', c.quorum_approvals,
        'edited', c.updated_input_hash is not null)${escalated ? sql` || jsonb_build_object('escalation', c.escalation)` : sql``}`
      },
      now() + make_interval(secs => ${WRITER_LEASE_SECONDS})
    from ${sql(source)} c ${byWriter ? sql`join input i on i.id = c.id` : sql``}
    ${byWriter ? sql`` : sql`returning id, type, account_id, agent_id, request_id, callback_url, action, created_at, seq`}`;
}

/** A new outbox row's id, chosen by its writer: msg_, its time, random characters (as the table's default). */
export function newEventId(): string {
  return newId('webhookMessage');
}

/** The snapshot announce stores of a row, as the writer makes it (timestamps in ISO form; the contract reads both). */
function snapshotOf(row: RequestRow): ActionSnapshot {
  return {
    id: row.id,
    status: row.status as ActionSnapshot['status'],
    action_type: row.action_type as ActionSnapshot['action_type'],
    title: row.title,
    risk_level: row.risk_level as ActionSnapshot['risk_level'],
    amount_cents: row.amount_cents === null ? null : Number(row.amount_cents),
    currency: row.currency,
    resolved_by: row.resolved_by,
    resolved_at: row.resolved_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    receipt: row.receipt,
    reason: row.reason,
    user_verified: row.user_verified ?? false,
    passkey_id: row.passkey_id ?? null,
    quorum_required: row.quorum_required ?? null,
    quorum_approvals: row.quorum_approvals ?? [],
    edited: Boolean(row.updated_input_hash),
    ...(row.approvers ? { approvers: row.approvers } : {}),
  };
}

/**
 * A request row as its creating statement stored it: what a creation sets never changes afterwards, and a pending
 * request's later decision (resolution, passkey, quorum approvals) is set back to what it was then.
 */
function asCreated(row: RequestRow, type: ActionEventInput['type']): RequestRow {
  if (type === 'action.resolved') return row; // decided at creation: final since
  return {
    ...row,
    status: 'pending',
    resolved_by: null,
    resolved_at: null,
    receipt: null,
    reason: null,
    user_verified: false,
    passkey_id: null,
    quorum_approvals: [],
  };
}

/** The event a creating statement stored for a new row (announce, `byWriter`), made from the row its writer sent. */
export function creationEventOf(row: RequestRow, eventId: string): ActionEventInput {
  return eventOfRow({
    id: eventId,
    type: row.status === 'pending' ? 'action.created' : 'action.resolved',
    account_id: row.account_id,
    agent_id: row.agent_id,
    callback_url: row.callback_url,
    action: snapshotOf(row),
    created_at: row.created_at,
    seq: 0,
  });
}

/**
 * The end of a request-changing statement: the rows of its CTE `source`, each with the outbox row its CTE
 * `announced` (announce above) wrote for it, as `outbox_event`; `eventsOf` takes them apart.
 */
export function selectWithEvents(sql: Sql, source: string) {
  return sql`select c.*, to_jsonb(a) as outbox_event from ${sql(source)} c left join announced a on a.request_id = c.id`;
}

/** Takes a statement's rows apart (selectWithEvents): the request rows, and the events to publish. */
export function eventsOf<R extends { outbox_event?: OutboxRow | null }>(
  rows: R[],
): { rows: Array<Omit<R, 'outbox_event'>>; events: ActionEventInput[] } {
  const events: ActionEventInput[] = [];
  const plain = rows.map(({ outbox_event, ...row }) => {
    if (outbox_event) events.push(eventOfRow(outbox_event));
    return row;
  });
  return { rows: plain, events };
}

/** The event's action of an outbox row's snapshot. */
function eventActionOf(action: NonNullable<OutboxRow['action']>): ActionEventInput['action'] {
  return 'amount_cents' in action ? actionOfSnapshot(action) : action;
}

/** The outcome of a resolution's snapshot, when it records one. */
function outcomeOf(action: NonNullable<OutboxRow['action']>): Pick<ActionEventInput, 'outcome'> {
  const outcome = 'amount_cents' in action ? outcomeOfSnapshot(action) : undefined;
  return outcome ? { outcome } : {};
}

/** The event an outbox row with a snapshot announces (a creation's row without one: creationEventOf). */
function eventOfRow(r: OutboxRow): ActionEventInput {
  if (r.action === null) throw new Error(`outbox row ${r.id} has no snapshot: its event is made of its request row`);
  return {
    id: r.id,
    type: r.type,
    account_id: r.account_id,
    agent_id: r.agent_id,
    callback_url: r.callback_url,
    occurred_at: new Date(r.created_at).toISOString(),
    action: eventActionOf(r.action),
    ...outcomeOf(r.action),
    ...('escalation' in r.action && r.action.escalation ? { escalation: r.action.escalation } : {}),
    ...(r.type === 'action.created' && 'approvers' in r.action && r.action.approvers
      ? { approvers: r.action.approvers }
      : {}),
  };
}

/**
 * The relay's side of the outbox. Its own writes (claims, deletes of published rows) commit without waiting for the WAL flush
 * (synchronous_commit off for those transactions only): the outbox row, committed and flushed with the change it
 * announces, is the record; a claim or a delete that a Postgres crash took back only makes a row be published again,
 * which the stream de-duplicates by event id. So the relay adds no flush of its own to the creates' commits.
 */
export function createOutboxStore(sql: Sql) {
  const noFlush = sql`commit_mode as (select set_config('synchronous_commit', 'off', true))`;
  /** The request rows of creation events taken over from their writer, by id. */
  const requestsOf = async (rows: OutboxRow[]): Promise<Map<string, RequestRow>> => {
    if (!rows.length) return new Map();
    const ids = rows.map((r) => r.request_id!);
    const found = await sql<RequestRow[]>`select * from actions.requests where id = any(${ids})`;
    return new Map(found.map((row) => [row.id, row]));
  };
  return {
    /** Takes up to `batch` unpublished rows for `leaseSeconds`; other relays skip them (and take them over after). */
    async claim(batch: number, leaseSeconds: number): Promise<ActionEventInput[]> {
      const rows = await sql<OutboxRow[]>`
        with ${noFlush}
        update actions.outbox o set claimed_until = now() + make_interval(secs => ${leaseSeconds})
        from (
          select id from actions.outbox
          where published_at is null and (claimed_until is null or claimed_until < now())
          order by seq limit ${batch} for update skip locked
        ) due, commit_mode
        where o.id = due.id
        returning o.id, o.type, o.account_id, o.agent_id, o.request_id, o.callback_url, o.action, o.created_at, o.seq`;
      const creations = await requestsOf(rows.filter((r) => r.action === null));
      return rows
        .sort((a, b) => Number(a.seq) - Number(b.seq))
        .flatMap((r) => {
          if (r.action !== null) return [eventOfRow(r)];
          const request = creations.get(r.request_id!);
          return request ? [creationEventOf(asCreated(request, r.type), r.id)] : []; // requests are never deleted
        });
    },

    /** Deletes rows the stream holds (their events are published; the stream is the record from then on). */
    async deletePublished(ids: string[]): Promise<void> {
      if (ids.length) {
        await sql`with ${noFlush} delete from actions.outbox using commit_mode where id = any(${ids})`;
      }
    },

    /** Gives rows back to be offered again after `delaySeconds`. */
    async release(ids: string[], delaySeconds: number): Promise<void> {
      if (ids.length) {
        await sql`with ${noFlush} update actions.outbox set claimed_until = now() + make_interval(secs => ${delaySeconds}) from commit_mode where id = any(${ids})`;
      }
    },

    /** Seconds since the oldest unpublished row was committed, or 0 when every row is published (the relay's lag). */
    async oldestUnpublishedSeconds(): Promise<number> {
      const [row] = await sql<Array<{ age: number }>>`
        select extract(epoch from now() - created_at)::float8 as age from actions.outbox
        where published_at is null order by seq limit 1`;
      return row ? Math.max(0, row.age) : 0;
    },
  };
}
export type OutboxStore = ReturnType<typeof createOutboxStore>;
