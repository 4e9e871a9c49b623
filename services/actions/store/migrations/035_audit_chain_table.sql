-- The audit chain in a table of its own. Sealing used to UPDATE every audit event to set its place in
-- the chain: a second full version of the row (receipt included), a new entry in every index of audit_events and a
-- trigger call, per event, for as many events as the creates wrote. Now audit_events is written once and never
-- changed; the sealer inserts each event's place (seq, prev_hash, hash) here, a row a fraction of the size.
create table if not exists actions.audit_chain (
  account_id text not null,
  seq bigint not null,
  event_id bigint not null,
  prev_hash text not null,
  hash text not null,
  -- When the sealer chained the event (the sealing lag); not part of the hash.
  sealed_at timestamptz not null default clock_timestamp(),
  -- GET /audit reads an account's chain in seq order; no two events ever share a place.
  primary key (account_id, seq)
);
-- An event has one place in its chain.
create unique index if not exists audit_chain_event_idx on actions.audit_chain (event_id);

-- The sealer's work list: events not chained yet, per account, in the order they were written. Filled by the
-- statement that writes the events (the trigger below), emptied by the statement that chains them.
create table if not exists actions.audit_unsealed (
  account_id text not null,
  event_id bigint not null,
  primary key (account_id, event_id)
);

-- Once per statement, whichever statement writes audit events: every writer's events are chained, none forgotten.
create or replace function actions.audit_to_seal() returns trigger language plpgsql as $$
begin
  insert into actions.audit_unsealed (account_id, event_id) select account_id, id from written;
  return null;
end $$;
drop trigger if exists audit_to_seal on actions.audit_events;
create trigger audit_to_seal after insert on actions.audit_events referencing new table as written
  for each statement execute function actions.audit_to_seal();

-- Events sealed and waiting before this change keep their places.
do $$
begin
  if exists (select 1 from information_schema.columns
             where table_schema = 'actions' and table_name = 'audit_events' and column_name = 'seq') then
    insert into actions.audit_chain (account_id, seq, event_id, prev_hash, hash, sealed_at)
      select account_id, seq, id, prev_hash, hash, coalesce(sealed_at, at) from actions.audit_events where seq is not null
      on conflict do nothing;
    insert into actions.audit_unsealed (account_id, event_id)
      select account_id, id from actions.audit_events where seq is null
      on conflict do nothing;
  end if;
end $$;

-- Both tables are evidence: refuse any change or removal of a row once written (audit_chain's rows are only ever
-- inserted by the sealer; audit_unsealed is a work list, not evidence).
create or replace function actions.audit_is_append_only() returns trigger language plpgsql as $$
begin
  raise exception '%.% is append-only', tg_table_schema, tg_table_name;
end $$;
drop trigger if exists audit_chain_append_only on actions.audit_chain;
create trigger audit_chain_append_only before update or delete on actions.audit_chain
  for each row execute function actions.audit_is_append_only();

-- The chain's fields leave audit_events, with the indexes on them (audit_chain_idx, audit_unsealed_idx,
-- audit_request_seq_idx); a request's events are read by request_id alone.
alter table actions.audit_events drop column if exists seq, drop column if exists prev_hash,
  drop column if exists hash, drop column if exists sealed_at;
create index if not exists audit_events_request_idx on actions.audit_events (request_id);
