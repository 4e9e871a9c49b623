-- Opens a limit's running total for a window from the ledger, under the account's lock (so no approval being
-- recorded at the same time is missed or counted twice). Called when a limit is created, so that its checks read
-- the total from the start instead of summing the ledger until the first approval it covers.
create or replace function policy.open_limit_usage(p_account text, p_limit text, p_starts timestamptz, p_ends timestamptz)
returns void language plpgsql as $$
begin
  perform pg_advisory_xact_lock(hashtext('policy.spend'), hashtext(p_account));
  insert into policy.limit_usage (limit_id, window_start, window_end, spent_cents)
  select l.id, p_starts, p_ends, policy.spent_cents(p_account, p_starts, p_ends, l.agent_id, l.action_type)
  from policy.spending_limits l where l.id = p_limit and l.account_id = p_account
  on conflict do nothing;
end
$$;
