-- Routing of a request left to people, as the matching rules said at its creation: `approvers` (member ids or
-- role:<role>; null: every member who may approve), and `escalate_to` from `escalate_at` on, once the escalation
-- (escalated_at) is done. Roles are matched when a member looks, so a member who joins with the role sees it too.
alter table actions.requests
  add column if not exists approvers text[],
  add column if not exists escalate_at timestamptz,
  add column if not exists escalate_to text[],
  add column if not exists escalated_at timestamptz;

-- The escalations still to do: the scheduler of every replica reads the due ones from here, oldest first.
create index if not exists requests_escalation_due_idx on actions.requests (escalate_at)
  where status = 'pending' and escalated_at is null and escalate_at is not null;

-- A database still converting its requests to partitions (migration 060, a large table): the new table gets the
-- same columns in the same order and the same index (the swap names it as the old table's), and the trigger that
-- mirrors the old table's writes into it is made again with every column, the new ones included.
do $$
declare
  columns text;
  updates text;
begin
  if to_regclass('actions.requests_partitioned') is null then
    return;
  end if;
  alter table actions.requests_partitioned
    add column if not exists approvers text[],
    add column if not exists escalate_at timestamptz,
    add column if not exists escalate_to text[],
    add column if not exists escalated_at timestamptz;
  create index if not exists requests_partitioned_escalation_due_idx on actions.requests_partitioned (escalate_at)
    where status = 'pending' and escalated_at is null and escalate_at is not null;
  select string_agg(quote_ident(attname), ', ' order by attnum),
         string_agg('excluded.' || quote_ident(attname), ', ' order by attnum)
    into columns, updates
    from pg_attribute
    where attrelid = 'actions.requests'::regclass and attnum > 0 and not attisdropped and attname <> 'id';
  execute format($f$
    create or replace function actions.requests_mirror() returns trigger language plpgsql as $m$
    begin
      if tg_op = 'DELETE' then
        delete from actions.requests_partitioned where id = old.id;
      else
        insert into actions.requests_partitioned select new.* on conflict (id) do update set (%s) = row(%s);
      end if;
      return null;
    end $m$
    $f$, columns, updates);
end $$;

-- The escalation's event goes out through the outbox like every change of a request.
alter table actions.outbox drop constraint if exists outbox_type_check;
alter table actions.outbox add constraint outbox_type_check
  check (type in ('action.created', 'action.resolved', 'action.escalated'));
