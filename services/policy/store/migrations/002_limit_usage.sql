-- Running totals per limit and window, so that a limit check reads a few rows whatever the number of approvals,
-- instead of summing the period's ledger on every request. The ledger (policy.spend) stays the record of truth:
-- a missing total is computed from it once, under the account's lock, and then kept up to date.

-- The spend a limit covers, read from the ledger: an account's USD spend in [starts, ends), narrowed to an agent
-- and/or an action type when set (the SQL twin of limitApplies in handlers/limit-checks.ts).
create or replace function policy.spent_cents(p_account text, p_starts timestamptz, p_ends timestamptz, p_agent text, p_action_type text)
returns bigint language sql stable as $$
  select coalesce(sum(amount_cents), 0)::bigint from policy.spend
  where account_id = p_account and currency = 'USD' and approved_at >= p_starts and approved_at < p_ends
    and (p_agent is null or agent_id = p_agent) and (p_action_type is null or action_type = p_action_type)
$$;

create table if not exists policy.limit_usage (
  limit_id text not null references policy.spending_limits (id) on delete cascade,
  window_start timestamptz not null,
  window_end timestamptz not null,
  spent_cents bigint not null check (spent_cents >= 0),
  primary key (limit_id, window_start)
);

-- Records one approval's spend under the account's lock, in one statement: the lock is held for the time the
-- database needs, not for network round trips. Each statement of a plpgsql function reads a fresh snapshot
-- (read committed), so everything the previous holder of the lock committed is seen.
--   p_entry   {action_id, agent_id, action_type, amount_cents, currency, approved_by, approved_at}
--   p_windows [{period, starts, ends}]: the current window of each period (computed by the service)
--   p_enforce when true, nothing is recorded if a covering limit would pass its figure
-- Returns {recorded, spent: {limit id: cents before this entry}} for the limits covering the entry.
create or replace function policy.record_spend(p_account text, p_entry jsonb, p_windows jsonb, p_enforce boolean)
returns jsonb language plpgsql as $$
declare
  amount bigint := (p_entry->>'amount_cents')::bigint;
  counted boolean := p_entry->>'currency' = 'USD';
  spent jsonb := '{}'::jsonb;
  over boolean := false;
  inserted int;
begin
  perform pg_advisory_xact_lock(hashtext('policy.spend'), hashtext(p_account));
  if counted then
    -- A total missing for a covering limit's current window is computed from the ledger now, once.
    insert into policy.limit_usage (limit_id, window_start, window_end, spent_cents)
    select l.id, w.starts, w.ends, policy.spent_cents(p_account, w.starts, w.ends, l.agent_id, l.action_type)
    from policy.spending_limits l
    join jsonb_to_recordset(p_windows) as w(period text, starts timestamptz, ends timestamptz) on w.period = l.period
    where l.account_id = p_account
      and (l.agent_id is null or l.agent_id = p_entry->>'agent_id')
      and (l.action_type is null or l.action_type = p_entry->>'action_type')
      and not exists (select 1 from policy.limit_usage u where u.limit_id = l.id and u.window_start = w.starts)
    on conflict do nothing;

    select coalesce(jsonb_object_agg(l.id, u.spent_cents), '{}'::jsonb), coalesce(bool_or(u.spent_cents + amount > l.amount_limit_cents), false)
      into spent, over
    from policy.spending_limits l
    join jsonb_to_recordset(p_windows) as w(period text, starts timestamptz, ends timestamptz) on w.period = l.period
    join policy.limit_usage u on u.limit_id = l.id and u.window_start = w.starts
    where l.account_id = p_account
      and (l.agent_id is null or l.agent_id = p_entry->>'agent_id')
      and (l.action_type is null or l.action_type = p_entry->>'action_type');
    if p_enforce and over then
      return jsonb_build_object('recorded', false, 'spent', spent);
    end if;
  end if;

  insert into policy.spend (action_id, account_id, agent_id, action_type, amount_cents, currency, approved_by, approved_at)
  values (p_entry->>'action_id', p_account, p_entry->>'agent_id', p_entry->>'action_type', amount, p_entry->>'currency',
          p_entry->>'approved_by', (p_entry->>'approved_at')::timestamptz)
  on conflict (action_id) do nothing;
  get diagnostics inserted = row_count;
  if inserted = 1 and counted then
    update policy.limit_usage u set spent_cents = u.spent_cents + amount
    from policy.spending_limits l
    where l.id = u.limit_id and l.account_id = p_account
      and (l.agent_id is null or l.agent_id = p_entry->>'agent_id')
      and (l.action_type is null or l.action_type = p_entry->>'action_type')
      and u.window_start <= (p_entry->>'approved_at')::timestamptz and (p_entry->>'approved_at')::timestamptz < u.window_end;
  end if;
  return jsonb_build_object('recorded', inserted = 1, 'spent', spent);
end
$$;

-- Takes back the spend of an action (never stored, or denied after all) from the ledger and from every total
-- that counted it, under the account's lock. Returns whether anything was recorded for it.
create or replace function policy.release_spend(p_account text, p_action_id text)
returns boolean language plpgsql as $$
declare
  gone policy.spend%rowtype;
begin
  perform pg_advisory_xact_lock(hashtext('policy.spend'), hashtext(p_account));
  delete from policy.spend where action_id = p_action_id and account_id = p_account returning * into gone;
  if not found then
    return false;
  end if;
  if gone.currency = 'USD' then
    update policy.limit_usage u set spent_cents = greatest(0, u.spent_cents - gone.amount_cents)
    from policy.spending_limits l
    where l.id = u.limit_id and l.account_id = p_account
      and (l.agent_id is null or l.agent_id = gone.agent_id)
      and (l.action_type is null or l.action_type = gone.action_type)
      and u.window_start <= gone.approved_at and gone.approved_at < u.window_end;
  end if;
  return true;
end
$$;

-- Ledger sums (the first read of a window) read only the index.
create index if not exists spend_account_time_cover_idx on policy.spend (account_id, approved_at) include (amount_cents, currency, agent_id, action_type);
drop index if exists policy.spend_account_time_idx;
