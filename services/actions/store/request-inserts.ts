import type { Sql } from '@agent-auth/db';
import type { ActionEventInput } from '@agent-auth/contracts';
import type { AuditEntry, NewRequest, RequestRow } from '../domain/rows.js';
import { announce, creationEventOf, newEventId } from './outbox.js';
import { THIS_MONTH } from './accounts.js';

/** One new request to store, with its audit entries, counted against the free plan's monthly quota. */
export interface RequestInsert {
  row: NewRequest;
  audit: AuditEntry[];
  freeQuota: number;
}

/** How many rows an unlimited account's monthly count is spread over (see countedCreations). */
const USAGE_SHARDS = 16;
const usageShard = () => Math.floor(Math.random() * USAGE_SHARDS);

/**
 * A new request as it is stored: the columns the insert below names, and the defaults of the others, so that the
 * writer has the stored row without reading it back. Built field by field: spreading the row and adding keys took
 * V8's slow object-clone path, about 4.7 kB allocated per create (a twentieth of all a create allocates).
 */
function storedRowOf(row: NewRequest): RequestRow {
  return {
    id: row.id,
    account_id: row.account_id,
    agent_id: row.agent_id,
    action_type: row.action_type,
    title: row.title,
    description: row.description,
    risk_level: row.risk_level,
    risk_rank: row.risk_rank,
    reversible: row.reversible,
    amount_cents: row.amount_cents,
    currency: row.currency,
    recipient: row.recipient,
    metadata_enc: row.metadata_enc,
    callback_url: row.callback_url,
    content_hash: row.content_hash,
    status: row.status,
    rule_applied: row.rule_applied,
    resolved_by: row.resolved_by,
    resolved_at: row.resolved ? row.at : null,
    reason: null,
    user_verified: false,
    passkey_id: null,
    spending_limit_exceeded: row.spending_limit_exceeded,
    created_at: row.at,
    expires_at: new Date(row.at.getTime() + row.expires_in_seconds * 1000),
    request_hash: row.request_hash,
    policy_version: row.policy_version,
    receipt: row.receipt,
    quorum_required: row.quorum_required ?? null,
    quorum_approvals: [],
    execution_started_at: null,
    execution_claim_id: null,
    updated_input_enc: null,
    updated_input_hash: null,
    approvers: row.approvers ?? null,
    escalate_at: row.escalate_at ?? null,
    escalate_to: row.escalate_to ?? null,
    escalated_at: null,
  };
}

/** The columns the insert below names: its column list, and the keys of the document it reads them from. */
const INSERTED_COLUMNS = [
  'id',
  'account_id',
  'agent_id',
  'action_type',
  'title',
  'description',
  'risk_level',
  'risk_rank',
  'reversible',
  'amount_cents',
  'currency',
  'recipient',
  'metadata_enc',
  'callback_url',
  'content_hash',
  'status',
  'rule_applied',
  'resolved_by',
  'resolved_at',
  'spending_limit_exceeded',
  'created_at',
  'expires_at',
  'request_hash',
  'policy_version',
  'receipt',
  'quorum_required',
  'approvers',
  'escalate_at',
  'escalate_to',
] as const satisfies ReadonlyArray<keyof RequestRow>;
// The insert's two lists, from the one above (fixed names, so written into the statement as they are).
const INSERTED_LIST = INSERTED_COLUMNS.join(', ');
const SELECTED_LIST = INSERTED_COLUMNS.map((column) => `i.${column}`).join(', ');

/**
 * A new request as the statement's document carries it: the inserted columns only, null values left out (an absent
 * key reads as null). Postgres parses every byte of the document and populates each key: with the full stored row a
 * statement of six creates took its backend 0.725 ms of CPU against 0.675.
 */
function insertedColumnsOf(row: RequestRow): Partial<RequestRow> {
  const doc: Record<string, unknown> = {};
  for (const column of INSERTED_COLUMNS) if (row[column] !== null) doc[column] = row[column];
  return doc;
}

/** A stored create: its row as stored, and the event its statement stored with it (to publish after the commit). */
export interface StoredCreate {
  row: RequestRow;
  event: ActionEventInput;
}

/**
 * The CTEs that count a statement's new requests against their accounts' months: `allowance` has, per account, how
 * many of them it may store (the first that many, in the statement's order). A free account's row (shard 0) is
 * raised by a conditional upsert, to the quota at most: its lock makes concurrent statements queue, each seeing the
 * count the one before left, so a burst cannot pass the quota; `last_counted` keeps what this raise granted (the
 * old count cannot be returned). An unlimited account raises one of USAGE_SHARDS rows at random, so its statements
 * do not queue on one row.
 */
function countedCreations(sql: Sql, freeQuota: number) {
  return sql`
    wanted as (
      select w.account_id, w.n, a.plan from (select account_id, count(*)::int as n from input group by account_id) w
      join actions.accounts a on a.id = w.account_id),
    counted as (
      insert into actions.monthly_usage as u (account_id, month, shard, actions, last_counted)
      select account_id, ${THIS_MONTH(sql)}, 0, least(n, ${freeQuota}), least(n, ${freeQuota})
      from wanted where plan = 'free' and ${freeQuota} >= 1
      on conflict (account_id, month, shard) do update
        set actions = least(u.actions + excluded.actions, ${freeQuota}),
            last_counted = least(u.actions + excluded.actions, ${freeQuota}) - u.actions
        where u.actions < ${freeQuota}
      returning u.account_id, u.last_counted as granted
    ),
    spread as (
      insert into actions.monthly_usage as u (account_id, month, shard, actions)
      select account_id, ${THIS_MONTH(sql)}, ${usageShard()}, n from wanted where plan = 'unlimited'
      on conflict (account_id, month, shard) do update set actions = u.actions + excluded.actions
      returning u.account_id
    ),
    allowance as (
      select account_id, granted from counted
      union all select s.account_id, w.n from spread s join wanted w on w.account_id = s.account_id)`;
}

/**
 * Stores new requests in one statement: counted against the plan quota, each with its audit entries and its outbox
 * event, atomically. Answers each one's stored row and event, or undefined for one the quota refused. The statement
 * answers only the ids it stored: the writer knows the rest (storedRowOf, creationEventOf), and reading each row
 * and its event back cost Postgres an eighth of the statement's time. Ids are unique: a stored id fails the whole
 * statement (the gatherer then tries each alone). All share one free quota (the gatherer puts only such creates
 * together).
 */
export async function insertGatheredCreates(
  sql: Sql,
  inserts: RequestInsert[],
): Promise<Array<StoredCreate | undefined>> {
  const rows = inserts.map(({ row }) => storedRowOf(row));
  const documents = inserts.map(({ audit }, i) => ({
    row: insertedColumnsOf(rows[i]!),
    audit,
    event_id: newEventId(),
  }));
  const stored = await sql<Array<{ id: string }>>`
    with input as (
      select d.ord, d.doc, r.* from jsonb_array_elements(${sql.json(documents as never)}::jsonb) with ordinality as d(doc, ord),
        jsonb_populate_record(null::actions.requests, d.doc->'row') r
    ),
    ${countedCreations(sql, inserts[0]!.freeQuota)},
    created as (
      insert into actions.requests (${sql.unsafe(INSERTED_LIST)})
      select ${sql.unsafe(SELECTED_LIST)}
      from (select *, row_number() over (partition by account_id order by ord) as place from input) i
      join allowance a on a.account_id = i.account_id
      where i.place <= a.granted
      order by i.ord
      returning *
    ), logged as (
      insert into actions.audit_events (request_id, account_id, event, actor, detail)
      select c.id, c.account_id, e->>'event', e->>'actor', coalesce(e->'detail', '{}'::jsonb)
      from created c join input i on i.id = c.id, jsonb_array_elements(i.doc->'audit') with ordinality as entries(e, n)
      order by i.ord, n
    ), announced as (${announce(sql, 'created', true)})
    select id from created`;
  const storedIds = new Set(stored.map((r) => r.id));
  return rows.map((row, i) =>
    storedIds.has(row.id) ? { row, event: creationEventOf(row, documents[i]!.event_id) } : undefined,
  );
}
