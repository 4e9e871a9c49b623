-- Every index on requests serves a query of the request path (docs/capacity.md lists them); each one is also a write
-- on every create, so nothing else is indexed.
--
-- GET /actions, no filter: `where agent_id = $1 [and (created_at, id) < cursor] order by created_at desc, id desc
-- limit n` reads this index backwards and stops after n rows, at any page and any number of stored requests.
create index if not exists requests_agent_list_idx on actions.requests (agent_id, created_at, id);
-- GET /actions?status=...: the same walk over one status (status=pending among a million resolved ones, too).
create index if not exists requests_agent_status_list_idx on actions.requests (agent_id, status, created_at, id);
-- GET /actions?action_type=...: the same walk over one action type; with status as well, the planner takes
-- whichever of the two is more selective and filters by the other.
create index if not exists requests_agent_type_list_idx on actions.requests (agent_id, action_type, created_at, id);
-- Superseded by requests_agent_list_idx (which also orders ties by id, for the cursor).
drop index if exists actions.requests_agent_created_idx;

-- GET /account reads the month's counter, whatever the plan, instead of counting the month's requests.
-- A free account counts on one row (shard 0) by a conditional upsert, which is what makes its quota exact under
-- concurrency. An unlimited account spreads its count over shards chosen at random, so a busy account's creations
-- do not queue on one row lock; the month's count is the sum of its rows.
alter table actions.monthly_usage add column if not exists shard smallint not null default 0;
do $$
begin
  if not exists (select 1 from pg_constraint where conname = 'monthly_usage_shard_pkey') then
    alter table actions.monthly_usage drop constraint if exists monthly_usage_pkey;
    alter table actions.monthly_usage add constraint monthly_usage_shard_pkey primary key (account_id, month, shard);
    -- Unlimited accounts kept no counter until now: their month so far is their stored requests.
    insert into actions.monthly_usage (account_id, month, shard, actions)
    select a.id, date_trunc('month', now() at time zone 'utc')::date, 0, count(r.id)
    from actions.accounts a join actions.requests r on r.account_id = a.id
      and r.created_at >= date_trunc('month', now() at time zone 'utc') at time zone 'utc'
    where a.plan = 'unlimited'
    group by a.id
    on conflict (account_id, month, shard) do update set actions = excluded.actions;
  end if;
end $$;
-- Was there for counting an unlimited account's month; nothing reads requests by account and time any more.
drop index if exists actions.requests_account_created_idx;
