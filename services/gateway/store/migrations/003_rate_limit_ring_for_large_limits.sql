-- Large limits get a ring of rows instead of one array per identity. Postgres rewrites a whole array to change one
-- element, and an array of more than ~250 entries is stored out of line (TOAST): every request rewrote its identity's
-- whole log, under its row lock, so a check cost time in proportion to the requests in the window (one round trip
-- measured at 0.49 ms with 100 entries, 1.5 ms with 1,000, 3.5 ms with 3,000; a limit may be set to 10,000, where an
-- identity's checks, one at a time, could not keep up with its own limit). In the ring a request reads and writes a
-- few small rows whatever the limit: its identity's head, the oldest entry (and each entry that has expired since,
-- once), and the slot it takes (0.6-0.8 ms with 1,000 or 3,000 entries). For small limits the array stays: one row
-- read and written in place beat the ring's three rows (checks/s at 32 callers on 120-entry logs, 0.45 of bare round
-- trips against 0.30-0.33).
--
-- An identity's allowed requests are numbered (seq); entry seq lives in slot seq % ring, the ring at least its limit.
-- The entries first_seq .. next_seq - 1 are those still in the window, oldest first; never more than the ring,
-- because refused requests are not recorded, so a new entry only ever reuses the slot of one that left the window.
-- Unlogged, as before: after a crash every identity starts a fresh window once.
create unlogged table if not exists gateway.rate_limit_heads (
  key text primary key,
  ring int not null,
  first_seq bigint not null default 0,
  next_seq bigint not null default 0,
  -- The latest entry's time: the log never steps back (a clock adjustment), and the idle clean-up reads it.
  last_ms bigint not null default 0
);
create unlogged table if not exists gateway.rate_limit_slots (
  key text not null,
  slot int not null,
  at_ms bigint not null,
  primary key (key, slot)
);

-- Lays an identity's entries (oldest first) into a ring of at least p_ring slots, starting at seq 0.
create or replace function gateway.rate_limit_lay(p_key text, p_ring int, p_entries bigint[], p_last_ms bigint)
returns void language plpgsql as $$
begin
  delete from gateway.rate_limit_slots where key = p_key;
  insert into gateway.rate_limit_slots (key, slot, at_ms)
    select p_key, (n - 1)::int, at from unnest(p_entries) with ordinality as e(at, n);
  insert into gateway.rate_limit_heads as h (key, ring, first_seq, next_seq, last_ms)
    values (p_key, greatest(p_ring, cardinality(p_entries)), 0, cardinality(p_entries), p_last_ms)
  on conflict (key) do update
    set ring = excluded.ring, first_seq = 0, next_seq = excluded.next_seq, last_ms = excluded.last_ms;
end $$;

-- The ring (large limits).
create or replace function gateway.rate_limit_hit_ring(p_key text, p_limit int, p_window_ms bigint)
returns table (allowed boolean, remaining int, reset_ms bigint) language plpgsql as $$
declare
  h gateway.rate_limit_heads%rowtype;
  v_now bigint;
  v_oldest bigint;
  v_allowed boolean;
  v_entries bigint[];
begin
  loop
    -- The head, locked, and its oldest entry, in one statement.
    select hd.*, s.at_ms into h.key, h.ring, h.first_seq, h.next_seq, h.last_ms, v_oldest
      from gateway.rate_limit_heads hd
      left join gateway.rate_limit_slots s on s.key = hd.key and s.slot = (hd.first_seq % hd.ring)::int
      where hd.key = p_key for update of hd;
    exit when found;
    -- First touch: an identity whose limit was 200 or less keeps the entries of its array.
    select r.hits, r.last_ms into v_entries, v_now from gateway.rate_limits r where r.key = p_key for update;
    if found then
      perform gateway.rate_limit_lay(p_key, p_limit, v_entries, v_now);
      delete from gateway.rate_limits where key = p_key;
    else
      insert into gateway.rate_limit_heads (key, ring) values (p_key, p_limit) on conflict (key) do nothing;
    end if;
  end loop;
  if h.ring < p_limit then
    -- The limit was raised (configuration): lay the entries out again in a ring that holds it. A lowered one keeps
    -- its larger ring (and every entry the window holds, however many more than the new limit).
    select coalesce(array_agg(s.at_ms order by q.seq), '{}') into v_entries
      from generate_series(h.first_seq, h.next_seq - 1) as q(seq)
      join gateway.rate_limit_slots s on s.key = p_key and s.slot = (q.seq % h.ring)::int;
    perform gateway.rate_limit_lay(p_key, p_limit, v_entries, h.last_ms);
    select hd.*, s.at_ms into h.key, h.ring, h.first_seq, h.next_seq, h.last_ms, v_oldest
      from gateway.rate_limit_heads hd
      left join gateway.rate_limit_slots s on s.key = hd.key and s.slot = (hd.first_seq % hd.ring)::int
      where hd.key = p_key;
  end if;
  v_now := greatest((extract(epoch from clock_timestamp()) * 1000)::bigint, h.last_ms);
  -- Entries leave the window oldest first; each is stepped over once, by the first request after it expires.
  while h.first_seq < h.next_seq and v_oldest <= v_now - p_window_ms loop
    h.first_seq := h.first_seq + 1;
    if h.first_seq < h.next_seq then
      select s.at_ms into v_oldest from gateway.rate_limit_slots s
        where s.key = p_key and s.slot = (h.first_seq % h.ring)::int;
    end if;
  end loop;
  v_allowed := h.next_seq - h.first_seq < p_limit;
  if v_allowed then
    if h.first_seq = h.next_seq then
      v_oldest := v_now;
    end if;
    -- The slot and the head in one statement (the slot is free: its entry left the window, or it was never used).
    with slot as (
      insert into gateway.rate_limit_slots (key, slot, at_ms) values (p_key, (h.next_seq % h.ring)::int, v_now)
      on conflict (key, slot) do update set at_ms = excluded.at_ms
    )
    update gateway.rate_limit_heads set first_seq = h.first_seq, next_seq = h.next_seq + 1, last_ms = v_now
      where key = p_key;
    h.next_seq := h.next_seq + 1;
  else
    if h.next_seq - h.first_seq > p_limit then
      -- More in the window than a lowered limit: a slot frees when all but limit - 1 of them have left it.
      select s.at_ms into v_oldest from gateway.rate_limit_slots s
        where s.key = p_key and s.slot = ((h.next_seq - p_limit) % h.ring)::int;
    end if;
    update gateway.rate_limit_heads set first_seq = h.first_seq where key = p_key and first_seq <> h.first_seq;
  end if;
  return query select
    v_allowed,
    greatest(p_limit - (h.next_seq - h.first_seq), 0)::int,
    case when h.next_seq = h.first_seq then 0::bigint else v_oldest + p_window_ms - v_now end;
end $$;

-- The array log of 002 (small limits), unchanged but for where a first touch finds an identity's entries.
create or replace function gateway.rate_limit_hit_array(p_key text, p_limit int, p_window_ms bigint)
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
    -- First touch: an identity whose limit was above 200 keeps the entries of its ring.
    select coalesce(array_agg(s.at_ms order by q.seq), '{}'), max(hd.last_ms) into v_hits, v_now
      from gateway.rate_limit_heads hd
      cross join generate_series(hd.first_seq, hd.next_seq - 1) as q(seq)
      join gateway.rate_limit_slots s on s.key = hd.key and s.slot = (q.seq % hd.ring)::int
      where hd.key = p_key;
    delete from gateway.rate_limit_slots where key = p_key;
    delete from gateway.rate_limit_heads where key = p_key;
    insert into gateway.rate_limits (key, hits, last_ms) values (p_key, v_hits, coalesce(v_now, 0))
      on conflict (key) do nothing;
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

-- Same contract as before (001, 002): one request against one identity's limit, in one round trip; the identity's row
-- lock serializes its requests across every replica, and the time is the database's, read under the lock. Returns
-- whether it is allowed, the requests left, and the milliseconds until the next slot frees (0 when the log is empty).
-- Replaced in place, so every replica, whichever version, uses the same log. An identity moves between the two forms
-- (its limit changed across 200) with its entries, at the first request under the new limit.
create or replace function gateway.rate_limit_hit(p_key text, p_limit int, p_window_ms bigint)
returns table (allowed boolean, remaining int, reset_ms bigint) language plpgsql as $$
begin
  if p_limit <= 200 then
    return query select * from gateway.rate_limit_hit_array(p_key, p_limit, p_window_ms);
  else
    return query select * from gateway.rate_limit_hit_ring(p_key, p_limit, p_window_ms);
  end if;
end $$;
