-- Sealing by horizon (the chain is sealed off the request path). Every audit event used to be copied onto
-- a work list (actions.audit_unsealed) by a statement trigger on the request path, and deleted from it again by the
-- sealer: a trigger with a transition table per writing statement, a row and an index entry in, a dead row and an
-- index entry out, per event. Now each event carries the id of the transaction that wrote it, and the sealer keeps
-- one cursor, (tx, id), below which every event is chained. It seals, in (tx, id) order, only events whose writing
-- transaction is older than every transaction still running (pg_snapshot_xmin of its statement's snapshot): no
-- event can commit later with a place below the cursor, so none is ever skipped however commits interleave.
alter table actions.audit_events add column if not exists tx xid8;
alter table actions.audit_events alter column tx set default pg_current_xact_id();
-- The sealer's one read: the events past the cursor, in cursor order (the cursor given as scalar subqueries, so
-- that the scan starts at it rather than filtering the whole index).
create index if not exists audit_events_tx_idx on actions.audit_events (tx, id);

create table if not exists actions.audit_horizon (
  only_row boolean primary key default true check (only_row),
  sealed_tx xid8 not null,
  sealed_id bigint not null
);
insert into actions.audit_horizon (sealed_tx, sealed_id) values ('0', 0) on conflict do nothing;

-- Events still on the old work list join the new one: they get this transaction's id (a bookkeeping column, not
-- part of any hash; the append-only trigger is held off for this one statement of the migration).
do $$
begin
  if to_regclass('actions.audit_unsealed') is not null
     and (select relkind from pg_class where oid = to_regclass('actions.audit_unsealed')) = 'r' then
    alter table actions.audit_events disable trigger audit_append_only;
    update actions.audit_events e set tx = pg_current_xact_id()
      from actions.audit_unsealed u where u.event_id = e.id and e.tx is null;
    alter table actions.audit_events enable trigger audit_append_only;
    drop trigger if exists audit_to_seal on actions.audit_events;
    drop function if exists actions.audit_to_seal();
    drop table actions.audit_unsealed;
  end if;
end $$;

-- What waits to be sealed, under the old name, for operators and tests: every event past the cursor.
create or replace view actions.audit_unsealed as
  select e.account_id, e.id as event_id
  from actions.audit_events e
  where (e.tx, e.id) > ((select sealed_tx from actions.audit_horizon), (select sealed_id from actions.audit_horizon));
