-- Making the per-request check cheap (measured with npm run bench):
-- 1. The log is rewritten on every request; as a logged table each request waited for a WAL flush at commit.
--    Unlogged: no WAL. After a database crash (or on a promoted standby) the table starts empty, so every identity
--    gets a fresh window once: an acceptable loss for counters that live a minute.
alter table gateway.rate_limits set unlogged;
-- 2. An index on last_ms (changed by every request) ruled out HOT updates; the once-a-minute clean-up scans instead.
drop index if exists gateway.rate_limits_last_idx;
-- 3. The log is ordered, so expired entries are a prefix: skip it instead of rebuilding the array through unnest.
create or replace function gateway.rate_limit_hit(p_key text, p_limit int, p_window_ms bigint)
returns table (allowed boolean, remaining int, reset_ms bigint) language plpgsql as $$
declare
  v_hits bigint[];
  v_now bigint;
  v_count int;
  v_first int := 1;
  v_allowed boolean;
begin
  loop
    select r.hits into v_hits from gateway.rate_limits r where r.key = p_key for update;
    exit when found;
    insert into gateway.rate_limits (key) values (p_key) on conflict (key) do nothing;
  end loop;
  v_now := (extract(epoch from clock_timestamp()) * 1000)::bigint;
  v_count := cardinality(v_hits);
  -- Never step back in time (a clock adjustment), so the log stays ordered.
  if v_count > 0 and v_hits[v_count] > v_now then
    v_now := v_hits[v_count];
  end if;
  while v_first <= v_count and v_hits[v_first] <= v_now - p_window_ms loop
    v_first := v_first + 1;
  end loop;
  if v_first > 1 then
    v_hits := coalesce(v_hits[v_first:v_count], '{}');
  end if;
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
      when v_count >= p_limit then v_hits[v_count - p_limit + 1] + p_window_ms - v_now
      else v_hits[1] + p_window_ms - v_now
    end;
end $$;
