-- Requests partitioned by time, so that old ones go by dropping a month's partition (RETENTION_DAYS) and each
-- partition's indexes stay the size of a month. The partition key is the id itself: a request id begins with its
-- creation time (nine base-36 digits of milliseconds, libs/contracts/ids.ts), so a month is a range of ids, the
-- primary key stays (id) alone, and a repeated id (a retried create of one Idempotency-Key or gateway action id)
-- still fails as a unique violation, which creating once relies on. A read by id goes to one partition. Ids made
-- before ids began with their time fall where their text sorts: into a month, the partition of older ones, or the
-- default partition.
--
-- A table small enough is converted here, at once. A larger one is converted online: this migration makes the
-- partitioned twin and a trigger that keeps it in step with every write; the actions service's partition keeper
-- (workers/partition-keeper.ts) copies the rows that were there before in batches, then swaps the two in one short
-- transaction and drops the old table. Until the swap every read and write uses the old table.

-- The time an id begins with (null when its first nine characters after the prefix are not base-36 digits).
create or replace function actions.time_of_id(id text) returns timestamptz language sql immutable parallel safe as $$
  select case when id ~ '^[a-z]+_[0-9a-z]{9}' then
    to_timestamp((select sum((strpos('0123456789abcdefghijklmnopqrstuvwxyz', substr(split_part(id, '_', 2), p + 1, 1)) - 1)::numeric
                             * power(36::numeric, 8 - p))
                  from generate_series(0, 8) as p) / 1000.0)
  end
$$;

-- The smallest request id made at a time: every id made from then on sorts at or after it.
create or replace function actions.request_id_bound(at timestamptz) returns text language sql immutable parallel safe as $$
  select 'act_' || actions.time_prefix((extract(epoch from at) * 1000)::bigint)
$$;

-- One partition per UTC month from `first_month` to `last_month` (those missing), named requests_mYYYY_MM.
create or replace function actions.add_request_partitions(parent text, first_month date, last_month date)
returns void language plpgsql as $$
declare
  m date := date_trunc('month', first_month)::date;
begin
  while m <= last_month loop
    if to_regclass(format('actions.requests_m%s', to_char(m, 'YYYY_MM'))) is null then
      begin
        execute format('create table actions.%I partition of %s for values from (%L) to (%L)',
          'requests_m' || to_char(m, 'YYYY_MM'), parent,
          actions.request_id_bound(m::timestamp at time zone 'utc'),
          actions.request_id_bound((m + interval '1 month')::timestamp at time zone 'utc'));
      exception when duplicate_table then
        null; -- another replica made it meanwhile
      end;
    end if;
    m := (m + interval '1 month')::date;
  end loop;
end $$;

-- Starts the conversion: the partitioned twin (same columns, constraints and indexes), its partitions from the
-- oldest stored request's month (a year back at most; older ones share requests_older) to two months ahead, a
-- default partition, the backfill's progress, and the trigger that mirrors every write of the old table into it.
create or replace function actions.begin_requests_partitioning() returns void language plpgsql as $$
declare
  this_month date := date_trunc('month', now() at time zone 'utc')::date;
  first_month date;
  columns text;
  updates text;
begin
  if (select relkind from pg_class where oid = 'actions.requests'::regclass) = 'p'
     or to_regclass('actions.requests_partitioned') is not null then
    return;
  end if;
  create table actions.requests_partitioned (like actions.requests including all) partition by range (id);
  -- The oldest id that begins with a time since 2020, read from the primary key's start (ids of before ids began
  -- with their time may sort among them: the first few are looked at).
  first_month := least(this_month, greatest(
    (this_month - interval '12 months')::date,
    coalesce((select date_trunc('month', min(actions.time_of_id(id)) at time zone 'utc')::date
              from (select id from actions.requests where id >= actions.request_id_bound('2020-01-01T00:00:00Z')
                    order by id limit 100) as first_ids),
             this_month)));
  execute format('create table actions.requests_older partition of actions.requests_partitioned for values from (minvalue) to (%L)',
    actions.request_id_bound(first_month::timestamp at time zone 'utc'));
  perform actions.add_request_partitions('actions.requests_partitioned', first_month, (this_month + interval '2 months')::date);
  create table actions.requests_default partition of actions.requests_partitioned default;
  create table actions.requests_backfill (
    only_row boolean primary key default true check (only_row),
    last_id text not null default ''
  );
  insert into actions.requests_backfill default values;
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
  create trigger requests_mirror after insert or update or delete on actions.requests
    for each row execute function actions.requests_mirror();
end $$;

-- Copies up to `batch` rows of the old table past the backfill's last id (a row the trigger already mirrored is
-- left as it is); answers how many it read. Replicas take turns on the progress row.
create or replace function actions.backfill_requests(batch int) returns int language plpgsql as $$
declare
  after text;
  last text;
  n int;
begin
  if to_regclass('actions.requests_backfill') is null then
    return 0;
  end if;
  select last_id into after from actions.requests_backfill for update;
  with rows as (select * from actions.requests where id > after order by id limit batch),
       copied as (insert into actions.requests_partitioned select * from rows on conflict (id) do nothing)
  select max(id), count(*) into last, n from rows;
  if n > 0 then
    update actions.requests_backfill set last_id = last;
  end if;
  return n;
end $$;

-- Ends the conversion in one transaction: writes wait on the old table while the rows past the backfill's last id
-- are copied (none but the ones the trigger already mirrored, once the backfill has walked the table), then the
-- twin takes the old table's name and its indexes the old indexes' names, and the old table is dropped.
create or replace function actions.finish_requests_partitioning() returns boolean language plpgsql as $$
declare
  old_index record;
  new_index text;
  shape text := $r$^CREATE (UNIQUE )?INDEX \S+ ON (ONLY )?\S+ $r$;
begin
  if to_regclass('actions.requests_partitioned') is null then
    return false;
  end if;
  lock table actions.requests in access exclusive mode;
  if to_regclass('actions.requests_partitioned') is null then
    return false; -- another replica swapped while this one waited for the lock
  end if;
  perform actions.backfill_requests(2147483647);
  drop trigger requests_mirror on actions.requests;
  drop function actions.requests_mirror();
  drop table actions.requests_backfill;
  alter table actions.requests rename to requests_unpartitioned;
  alter table actions.requests_partitioned rename to requests;
  for old_index in
    select c.relname as name, regexp_replace(pg_get_indexdef(i.indexrelid), shape, '') as body
    from pg_index i join pg_class c on c.oid = i.indexrelid
    where i.indrelid = 'actions.requests_unpartitioned'::regclass
  loop
    execute format('alter index actions.%I rename to %I', old_index.name, old_index.name || '_unpartitioned');
    select c.relname into new_index
    from pg_index i join pg_class c on c.oid = i.indexrelid
    where i.indrelid = 'actions.requests'::regclass and regexp_replace(pg_get_indexdef(i.indexrelid), shape, '') = old_index.body;
    if new_index is not null then
      execute format('alter index actions.%I rename to %I', new_index, old_index.name);
    end if;
  end loop;
  drop table actions.requests_unpartitioned;
  return true;
end $$;

-- Retention: drops every month's partition (and requests_older) whose ids all date from before `cutoff`, and
-- deletes the older requests of the default partition; answers the partitions dropped.
create or replace function actions.drop_request_partitions(cutoff timestamptz) returns setof text language plpgsql as $$
declare
  part record;
  upper_bound text;
begin
  if (select relkind from pg_class where oid = 'actions.requests'::regclass) <> 'p' then
    return;
  end if;
  for part in
    select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'actions.requests'::regclass
  loop
    upper_bound := substring(part.bound from $r$TO \('([^']*)'\)$r$);
    if upper_bound is not null and actions.time_of_id(upper_bound) <= cutoff then
      execute format('drop table if exists actions.%I', part.name);
      return next part.name;
    end if;
  end loop;
  if to_regclass('actions.requests_default') is not null then
    delete from actions.requests_default where created_at < cutoff;
  end if;
end $$;

select actions.begin_requests_partitioning();
do $$
begin
  if (select count(*) from (select 1 from actions.requests limit 10001) as stored) <= 10000 then
    perform actions.finish_requests_partitioning();
  end if;
end $$;
