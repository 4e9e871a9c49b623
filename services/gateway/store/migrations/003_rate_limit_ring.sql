-- The sliding log kept as a ring of rows instead of one array per identity. Postgres rewrites a whole array to change
-- one element, and an array of more than ~250 entries is stored out of line (TOAST): every request rewrote its
-- identity's whole log, so a check cost time in proportion to the requests in the window (one round trip measured at
-- 0.49 ms with 100 entries, 1.5 ms with 1,000, 3.5 ms with 3,000; a limit may be set to 10,000). Now a request reads
-- and writes a few small rows whatever the limit: its identity's head, the oldest entry (and each entry that has
-- expired since, once), and the slot it takes.
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

-- Same contract as before (001, 002): one request against one identity's limit, in one round trip; the head's row
-- lock serializes an identity's requests across every replica, and the time is the database's, read under the lock.
-- Returns whether it is allowed, the requests left, and the milliseconds until the next slot frees (0 when the log
-- is empty). Replacing it in place moves every replica, whichever version, to the ring at once.
create or replace function gateway.rate_limit_hit(p_key text, p_limit int, p_window_ms bigint)
returns table (allowed boolean, remaining int, reset_ms bigint) language plpgsql as $$
declare
  h gateway.rate_limit_heads%rowtype;
  v_now bigint;
  v_oldest bigint;
  v_allowed boolean;
  v_entries bigint[];
begin
  loop
    select * into h from gateway.rate_limit_heads where key = p_key for update;
    exit when found;
    insert into gateway.rate_limit_heads (key, ring) values (p_key, p_limit) on conflict (key) do nothing;
  end loop;
  if h.ring < p_limit then
    -- The limit was raised (configuration): lay the entries out again in a ring that holds it. A lowered one keeps
    -- its larger ring (and every entry the window holds, however many more than the new limit).
    select coalesce(array_agg(s.at_ms order by q.seq), '{}') into v_entries
      from generate_series(h.first_seq, h.next_seq - 1) as q(seq)
      join gateway.rate_limit_slots s on s.key = p_key and s.slot = (q.seq % h.ring)::int;
    perform gateway.rate_limit_lay(p_key, p_limit, v_entries, h.last_ms);
    select * into h from gateway.rate_limit_heads where key = p_key;
  end if;
  v_now := greatest((extract(epoch from clock_timestamp()) * 1000)::bigint, h.last_ms);
  -- Entries leave the window oldest first; each is stepped over once, by the first request after it expires.
  while h.first_seq < h.next_seq loop
    select s.at_ms into v_oldest from gateway.rate_limit_slots s
      where s.key = p_key and s.slot = (h.first_seq % h.ring)::int;
    exit when v_oldest > v_now - p_window_ms;
    h.first_seq := h.first_seq + 1;
  end loop;
  v_allowed := h.next_seq - h.first_seq < p_limit;
  if v_allowed then
    insert into gateway.rate_limit_slots (key, slot, at_ms) values (p_key, (h.next_seq % h.ring)::int, v_now)
    on conflict (key, slot) do update set at_ms = excluded.at_ms;
    if h.first_seq = h.next_seq then
      v_oldest := v_now;
    end if;
    h.next_seq := h.next_seq + 1;
    h.last_ms := v_now;
  end if;
  if h.next_seq - h.first_seq > p_limit then
    -- More in the window than a lowered limit: a slot frees when all but limit - 1 of them have left it.
    select s.at_ms into v_oldest from gateway.rate_limit_slots s
      where s.key = p_key and s.slot = ((h.next_seq - p_limit) % h.ring)::int;
  end if;
  update gateway.rate_limit_heads set first_seq = h.first_seq, next_seq = h.next_seq, last_ms = h.last_ms
    where key = p_key;
  return query select
    v_allowed,
    greatest(p_limit - (h.next_seq - h.first_seq), 0)::int,
    case when h.next_seq = h.first_seq then 0::bigint else v_oldest + p_window_ms - v_now end;
end $$;

-- The logs kept so far move into rings of their own size (their limit is not stored: the ring takes the entries'
-- count, and the first request under a larger limit lays them out again). The old table is emptied, not dropped:
-- a replica still running the previous version's clean-up deletes from it.
do $$
declare
  r record;
begin
  for r in select key, hits, last_ms from gateway.rate_limits where cardinality(hits) > 0 loop
    if not exists (select 1 from gateway.rate_limit_heads where key = r.key) then
      perform gateway.rate_limit_lay(r.key, cardinality(r.hits), r.hits, r.last_ms);
    end if;
  end loop;
  delete from gateway.rate_limits;
end $$;
