-- Rate limits shared by every gateway replica: an exact sliding log per identity (agent, device or IP).
-- hits holds the epoch milliseconds (database clock) of the requests allowed in the current window, oldest first;
-- it never holds more entries than the limit, because refused requests are not recorded.
create table if not exists gateway.rate_limits (
  key text primary key,
  hits bigint[] not null default '{}',
  last_ms bigint not null default 0
);
-- The clean-up of identities idle for longer than a window.
create index if not exists rate_limits_last_idx on gateway.rate_limits (last_ms);

-- One request against one identity's limit, in one round trip. The row lock serializes the requests of one identity
-- across all replicas, and the time is read after the lock is held, from the database's clock, so the log is
-- ordered and every replica uses the same clock: no window (p_window_ms wide, ending at any instant) ever holds
-- more than p_limit allowed requests, at a window boundary included.
-- Returns whether it is allowed, the requests left, and the milliseconds until the next slot frees (0 when the log
-- is empty).
create or replace function gateway.rate_limit_hit(p_key text, p_limit int, p_window_ms bigint)
returns table (allowed boolean, remaining int, reset_ms bigint) language plpgsql as $$
declare
  v_hits bigint[];
  v_now bigint;
  v_count int;
  v_allowed boolean;
begin
  loop
    select r.hits into v_hits from gateway.rate_limits r where r.key = p_key for update;
    exit when found;
    insert into gateway.rate_limits (key) values (p_key) on conflict (key) do nothing;
  end loop;
  v_now := (extract(epoch from clock_timestamp()) * 1000)::bigint;
  -- Never step back in time (a clock adjustment), so the log stays ordered.
  if cardinality(v_hits) > 0 and v_hits[cardinality(v_hits)] > v_now then
    v_now := v_hits[cardinality(v_hits)];
  end if;
  v_hits := array(select h from unnest(v_hits) with ordinality as t(h, n) where h > v_now - p_window_ms order by n);
  v_allowed := cardinality(v_hits) < p_limit;
  if v_allowed then
    v_hits := v_hits || v_now;
  end if;
  update gateway.rate_limits set hits = v_hits, last_ms = v_now where key = p_key;
  v_count := cardinality(v_hits);
  return query select
    v_allowed,
    greatest(p_limit - v_count, 0),
    case
      when v_count = 0 then 0::bigint
      -- full: a slot frees when enough of the oldest hits have left the window for the count to drop below the limit
      when v_count >= p_limit then v_hits[v_count - p_limit + 1] + p_window_ms - v_now
      else v_hits[1] + p_window_ms - v_now
    end;
end $$;
