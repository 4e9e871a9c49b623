-- Audit events, and their places in the chain, partitioned by month as requests are (060), so that RETENTION_DAYS
-- drops their old months too, each after a signed checkpoint per account (docs/decisions.md "Data that ages out").
-- Migration 060's conversion is made generic here (begin, backfill, swap, months ahead, retention of any table
-- partitioned by a time-ordered key) and the requests' functions become calls of it: one machinery for the three.

-- An audit event's id begins with its time: the milliseconds since 1970 times 2^20, plus the last 20 bits of a
-- counter (two ids meet only if over a million events are written in one millisecond). Ids still sort as they were
-- written, to the millisecond, and a month is a range of ids; the ids given before (1, 2, 3, …) sort before all.
create sequence if not exists actions.audit_event_seq as bigint;

-- The smallest audit event id of a time: every id made from then on is at least this.
create or replace function actions.audit_event_id_bound(at timestamptz) returns bigint language sql immutable parallel safe as $$
  select floor(extract(epoch from at) * 1000)::bigint * 1048576
$$;

-- The time an audit event id begins with (the epoch for the ids given before ids began with their time).
create or replace function actions.time_of_audit_event_id(id bigint) returns timestamptz language sql immutable parallel safe as $$
  select to_timestamp(greatest(id, 0) / 1048576 / 1000.0)
$$;

create or replace function actions.new_audit_event_id() returns bigint language sql volatile as $$
  select actions.audit_event_id_bound(clock_timestamp()) + nextval('actions.audit_event_seq') % 1048576
$$;

alter table actions.audit_events alter column id drop identity if exists;
alter table actions.audit_events alter column id set default actions.new_audit_event_id();

-- The tables partitioned by time and how a time becomes a bound of their partition key: requests by their id (060),
-- audit events by their id and the chain's places by their event's id, so an event and its place share a month.
create or replace function actions.partition_bound(tbl text, at timestamptz) returns text language sql immutable parallel safe as $$
  select case tbl when 'requests' then actions.request_id_bound(at)
                  when 'audit_events' then actions.audit_event_id_bound(at)::text
                  when 'audit_chain' then actions.audit_event_id_bound(at)::text end
$$;

-- The time a bound (or a key) of `tbl` stands for.
create or replace function actions.partition_time(tbl text, bound text) returns timestamptz language sql immutable parallel safe as $$
  select case tbl when 'requests' then actions.time_of_id(bound)
                  else actions.time_of_audit_event_id(bound::bigint) end
$$;

-- The partition key's column and type of a partitioned table.
create or replace function actions.partition_key_of(tbl regclass) returns table (name text, type text) language sql stable as $$
  select a.attname::text, format_type(a.atttypid, a.atttypmod)
  from pg_partitioned_table p join pg_attribute a on a.attrelid = p.partrelid and a.attnum = p.partattrs[0]
  where p.partrelid = tbl
$$;

-- One partition of `parent` per UTC month from `first_month` to `last_month` (those missing), named <tbl>_mYYYY_MM.
create or replace function actions.add_partitions(tbl text, parent text, first_month date, last_month date)
returns void language plpgsql as $$
declare
  m date := date_trunc('month', first_month)::date;
  name text;
begin
  while m <= last_month loop
    name := tbl || '_m' || to_char(m, 'YYYY_MM');
    if to_regclass(format('actions.%I', name)) is null then
      begin
        execute format('create table actions.%I partition of %s for values from (%L) to (%L)', name, parent,
          actions.partition_bound(tbl, m::timestamp at time zone 'utc'),
          actions.partition_bound(tbl, (m + interval '1 month')::timestamp at time zone 'utc'));
      exception when duplicate_table then
        null; -- another replica made it meanwhile
      end;
    end if;
    m := (m + interval '1 month')::date;
  end loop;
end $$;

-- Starts converting `tbl` to partitions by range of `key`: the partitioned twin <tbl>_partitioned (the same columns,
-- defaults and constraints, and each index: one that must be unique but lacks the key is made without uniqueness,
-- which a partitioned table cannot check), its partitions from the oldest stored key's month (a year back at most;
-- older ones share <tbl>_older) to two months ahead, a default partition, the backfill's progress, and the trigger
-- that mirrors every write of the old table into the twin.
create or replace function actions.begin_partitioning(tbl text, key text) returns void language plpgsql as $$
declare
  this_month date := date_trunc('month', now() at time zone 'utc')::date;
  first_month date;
  old regclass := format('actions.%I', tbl)::regclass;
  twin text := tbl || '_partitioned';
  key_type text;
  columns text;
  updates text;
  idx record;
  shape text := $r$^CREATE (UNIQUE )?INDEX \S+ ON (ONLY )?\S+ $r$;
begin
  if (select relkind from pg_class where oid = old) = 'p' or to_regclass(format('actions.%I', twin)) is not null then
    return;
  end if;
  select format_type(atttypid, atttypmod) into key_type from pg_attribute where attrelid = old and attname = key;
  if key_type not in ('text', 'bigint') then
    raise exception 'partitioning by % (%) is not supported', key, key_type;
  end if;
  execute format('create table actions.%I (like actions.%I including all excluding indexes) partition by range (%I)',
    twin, tbl, key);
  for idx in
    select i.indisunique as is_unique, pg_get_indexdef(i.indexrelid) as def, pg_get_constraintdef(k.oid) as constraint_def,
      exists (select from pg_attribute a where a.attrelid = old and a.attname = key and a.attnum = any(i.indkey)) as has_key
    from pg_index i left join pg_constraint k on k.conindid = i.indexrelid and k.contype in ('p', 'u')
    where i.indrelid = old
  loop
    if idx.constraint_def is not null and idx.has_key then
      execute format('alter table actions.%I add %s', twin, idx.constraint_def);
    else
      execute format('create %s index on actions.%I %s', case when idx.is_unique and idx.has_key then 'unique' else '' end,
        twin, regexp_replace(idx.def, shape, ''));
    end if;
  end loop;
  -- The oldest key that begins with a time since 2020, read from the key's index (keys of before keys began with
  -- their time may sort among them: the first few are looked at).
  execute format('select date_trunc(''month'', min(actions.partition_time(%L, k::text)) at time zone ''utc'')::date
                  from (select %I as k from actions.%I where %I >= %L::%s order by %I limit 100) as first_keys',
    tbl, key, tbl, key, actions.partition_bound(tbl, '2020-01-01T00:00:00Z'), key_type, key) into first_month;
  first_month := least(this_month, greatest((this_month - interval '12 months')::date, coalesce(first_month, this_month)));
  execute format('create table actions.%I partition of actions.%I for values from (minvalue) to (%L)',
    tbl || '_older', twin, actions.partition_bound(tbl, first_month::timestamp at time zone 'utc'));
  perform actions.add_partitions(tbl, format('actions.%I', twin), first_month, (this_month + interval '2 months')::date);
  execute format('create table actions.%I partition of actions.%I default', tbl || '_default', twin);
  execute format('create table actions.%I (only_row boolean primary key default true check (only_row), last_id text not null)',
    tbl || '_backfill');
  -- Below every key: '' for text, the smallest bigint.
  execute format('insert into actions.%I (last_id) values (%L)', tbl || '_backfill',
    case key_type when 'text' then '' else '-9223372036854775808' end);
  select string_agg(quote_ident(attname), ', ' order by attnum),
         string_agg('excluded.' || quote_ident(attname), ', ' order by attnum)
    into columns, updates
    from pg_attribute
    where attrelid = old and attnum > 0 and not attisdropped and attname <> key;
  execute format($f$
    create or replace function actions.%1$I() returns trigger language plpgsql as $m$
    begin
      if tg_op = 'DELETE' then
        delete from actions.%2$I where %3$I = old.%3$I;
      else
        insert into actions.%2$I select new.* on conflict (%3$I) do update set (%4$s) = row(%5$s);
      end if;
      return null;
    end $m$
    $f$, tbl || '_mirror', twin, key, columns, updates);
  execute format('create trigger %I after insert or update or delete on actions.%I for each row execute function actions.%I()',
    tbl || '_mirror', tbl, tbl || '_mirror');
end $$;

-- Copies up to `batch` rows of the old table past the backfill's last key (a row the trigger already mirrored is
-- left as it is); answers how many it read. Replicas take turns on the progress row.
create or replace function actions.backfill_partitioned(tbl text, batch int) returns int language plpgsql as $$
declare
  after text;
  last text;
  n int;
  key text;
  key_type text;
begin
  if to_regclass(format('actions.%I', tbl || '_backfill')) is null then
    return 0;
  end if;
  execute format('select last_id from actions.%I for update', tbl || '_backfill') into after;
  select k.name, k.type into key, key_type from actions.partition_key_of(format('actions.%I', tbl || '_partitioned')) k;
  execute format($q$
    with rows as (select * from actions.%1$I where %3$I > $1::%4$s order by %3$I limit $2),
         copied as (insert into actions.%2$I select * from rows on conflict (%3$I) do nothing)
    select max(%3$I)::text, count(*)::int from rows$q$, tbl, tbl || '_partitioned', key, key_type)
    into last, n using after, batch;
  if n > 0 then
    execute format('update actions.%I set last_id = $1', tbl || '_backfill') using last;
  end if;
  return n;
end $$;

-- Ends the conversion in one transaction: writes wait on the old table while the rows past the backfill's last key
-- are copied (none but the ones the trigger already mirrored, once the backfill has walked the table); the twin takes
-- the old table's own triggers (the audit tables' append-only ones), its name, and its indexes' names; views on the
-- old table are made again on the new one; the old table is dropped.
create or replace function actions.finish_partitioning(tbl text) returns boolean language plpgsql as $$
declare
  twin text := tbl || '_partitioned';
  item record;
  new_index text;
  view_names text[] := '{}';
  view_defs text[] := '{}';
  shape text := $r$^CREATE (UNIQUE )?INDEX \S+ ON (ONLY )?\S+ $r$;
begin
  if to_regclass(format('actions.%I', twin)) is null then
    return false;
  end if;
  execute format('lock table actions.%I in access exclusive mode', tbl);
  if to_regclass(format('actions.%I', twin)) is null then
    return false; -- another replica swapped while this one waited for the lock
  end if;
  perform actions.backfill_partitioned(tbl, 2147483647);
  execute format('drop trigger %I on actions.%I', tbl || '_mirror', tbl);
  execute format('drop function actions.%I()', tbl || '_mirror');
  execute format('drop table actions.%I', tbl || '_backfill');
  for item in
    select pg_get_triggerdef(t.oid) as def from pg_trigger t
    where t.tgrelid = format('actions.%I', tbl)::regclass and not t.tgisinternal
  loop
    execute regexp_replace(item.def, ' ON \S+ ', format(' ON actions.%I ', twin));
  end loop;
  for item in
    select distinct v.oid::regclass::text as name, pg_get_viewdef(v.oid) as def
    from pg_depend d join pg_rewrite r on r.oid = d.objid join pg_class v on v.oid = r.ev_class
    where d.classid = 'pg_rewrite'::regclass and d.refobjid = format('actions.%I', tbl)::regclass and v.relkind = 'v'
  loop
    view_names := view_names || item.name;
    view_defs := view_defs || item.def;
    execute format('drop view %s', item.name);
  end loop;
  execute format('alter table actions.%I rename to %I', tbl, tbl || '_unpartitioned');
  execute format('alter table actions.%I rename to %I', twin, tbl);
  for item in
    select c.relname as name, i.indisunique as is_unique, regexp_replace(pg_get_indexdef(i.indexrelid), shape, '') as body
    from pg_index i join pg_class c on c.oid = i.indexrelid
    where i.indrelid = format('actions.%I', tbl || '_unpartitioned')::regclass
  loop
    execute format('alter index actions.%I rename to %I', item.name, item.name || '_unpartitioned');
    select c.relname into new_index
    from pg_index i join pg_class c on c.oid = i.indexrelid
    where i.indrelid = format('actions.%I', tbl)::regclass and i.indisunique = item.is_unique
      and regexp_replace(pg_get_indexdef(i.indexrelid), shape, '') = item.body;
    if new_index is not null then
      execute format('alter index actions.%I rename to %I', new_index, item.name);
    end if;
  end loop;
  -- The twin's indexes no old one named (one made without uniqueness) lose the twin's name.
  for item in
    select c.relname as name from pg_index i join pg_class c on c.oid = i.indexrelid
    where i.indrelid = format('actions.%I', tbl)::regclass and starts_with(c.relname, twin || '_')
  loop
    execute format('alter index actions.%I rename to %I', item.name, tbl || substr(item.name, length(twin) + 1));
  end loop;
  for i in 1 .. coalesce(array_length(view_names, 1), 0) loop
    execute format('create view %s as %s', view_names[i], view_defs[i]);
  end loop;
  execute format('drop table actions.%I', tbl || '_unpartitioned');
  return true;
end $$;

-- The partitions of `tbl` (its months, and its partition of older keys) whose keys all date from before `cutoff`,
-- oldest first, with the bound they end at.
create or replace function actions.partitions_before(tbl text, cutoff timestamptz)
returns table (name text, upper_bound text) language sql stable as $$
  select p.name, p.upper_bound
  from (select c.relname::text as name,
               substring(pg_get_expr(c.relpartbound, c.oid) from $r$ TO \('?([^')]*)'?\)$r$) as upper_bound
        from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = format('actions.%I', tbl)::regclass) as p
  where p.upper_bound is not null and actions.partition_time(tbl, p.upper_bound) <= cutoff
  order by actions.partition_time(tbl, p.upper_bound)
$$;

-- Retention: drops every partition of `tbl` whose keys all date from before `cutoff`; answers their names. (The
-- audit tables' months go through the actions service's cut instead, which signs a checkpoint first.)
create or replace function actions.drop_partitions(tbl text, cutoff timestamptz) returns setof text language plpgsql as $$
declare
  part record;
begin
  if (select relkind from pg_class where oid = format('actions.%I', tbl)::regclass) <> 'p' then
    return;
  end if;
  for part in select * from actions.partitions_before(tbl, cutoff) loop
    execute format('drop table if exists actions.%I', part.name);
    return next part.name;
  end loop;
end $$;

-- Migration 060's functions, now the generic ones (replicas not yet upgraded, and the scale bench, call them).
create or replace function actions.add_request_partitions(parent text, first_month date, last_month date)
returns void language sql as $$ select actions.add_partitions('requests', parent, first_month, last_month) $$;
create or replace function actions.begin_requests_partitioning() returns void language sql as $$
  select actions.begin_partitioning('requests', 'id')
$$;
create or replace function actions.backfill_requests(batch int) returns int language sql as $$
  select actions.backfill_partitioned('requests', batch)
$$;
create or replace function actions.finish_requests_partitioning() returns boolean language sql as $$
  select actions.finish_partitioning('requests')
$$;
-- The requests' retention also deletes the default partition's older requests (ids made before ids began with
-- their time); the audit tables' default partitions hold only ids ahead of every month (delete is refused there).
create or replace function actions.drop_request_partitions(cutoff timestamptz) returns setof text language plpgsql as $$
begin
  return query select actions.drop_partitions('requests', cutoff);
  if to_regclass('actions.requests_default') is not null then
    delete from actions.requests_default where created_at < cutoff;
  end if;
end $$;

-- Per account, the last event dropped with the audit trail's old months, signed like a head (its own typ): the
-- remaining chain starts after it. One row an account, moved forward by each cut.
create table if not exists actions.audit_checkpoints (
  account_id text primary key,
  seq bigint not null,
  hash text not null,
  at timestamptz not null,
  signature text not null,
  cut_at timestamptz not null default now()
);

select actions.begin_partitioning('audit_events', 'id');
select actions.begin_partitioning('audit_chain', 'event_id');
do $$
begin
  if (select count(*) from (select 1 from actions.audit_events limit 10001) as stored) <= 10000 then
    perform actions.finish_partitioning('audit_events');
  end if;
  if (select count(*) from (select 1 from actions.audit_chain limit 10001) as stored) <= 10000 then
    perform actions.finish_partitioning('audit_chain');
  end if;
end $$;
