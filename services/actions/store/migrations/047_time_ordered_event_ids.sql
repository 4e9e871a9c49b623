-- Outbox rows that the database names (the events of decisions, expiries and the like) get ids that begin with
-- their time, as the creates' writer names its own (libs/contracts/ids.ts): a random key dirties a random page of
-- the outbox's primary key on every insert, and after each checkpoint writes a full image of that page into the WAL.
-- The time is nine lowercase base-36 digits of milliseconds, as the writer's; the rest is 16 random hex digits.
create or replace function actions.time_prefix(ms bigint) returns text language sql immutable parallel safe as $$
  select string_agg(substr('0123456789abcdefghijklmnopqrstuvwxyz', ((ms / power(36, p)::bigint) % 36)::int + 1, 1),
                    '' order by p desc)
  from generate_series(0, 8) as p
$$;
alter table actions.outbox alter column id set default
  ('msg_' || actions.time_prefix((extract(epoch from clock_timestamp()) * 1000)::bigint)
          || substr(md5(gen_random_uuid()::text), 1, 16));
