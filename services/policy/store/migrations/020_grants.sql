-- Standing grants: created from a person's approval, they approve similar requests at creation (same
-- agent, action type, recipient and currency) until they expire, are revoked, or run out of budget or uses.
-- Budget and uses are counted under the account's advisory lock (policy.use_grant), the one spend accounting takes,
-- so no number of replicas deciding at once can spend past a grant.
create table if not exists policy.grants (
  id text primary key,
  account_id text not null,
  agent_id text not null,
  action_type text not null,
  recipient text,
  currency text not null,
  expires_at timestamptz not null,
  max_amount_cents bigint check (max_amount_cents > 0),
  spent_cents bigint not null default 0 check (spent_cents >= 0),
  max_uses integer check (max_uses > 0),
  uses integer not null default 0 check (uses >= 0),
  revoked_at timestamptz,
  -- One grant per approval: a retried creation finds the first.
  created_from text not null unique,
  created_at timestamptz not null default now()
);
-- The replica's copy of an account's live grants, and GET /grants.
create index if not exists grants_account_expiry_idx on policy.grants (account_id, expires_at);

-- Which grant approved which request, so that a request never stored gives its use back.
create table if not exists policy.grant_uses (
  action_id text primary key,
  grant_id text not null references policy.grants (id) on delete cascade,
  account_id text not null,
  amount_cents bigint
);

-- Spend a grant approved is spend like any other, told apart in the ledger.
alter table policy.spend drop constraint if exists spend_approved_by_check;
alter table policy.spend add constraint spend_approved_by_check check (approved_by in ('rule', 'person', 'grant'));

-- Approves a request by the first of p_grants (in the order given) that is live with budget and uses left, under the
-- account's lock: its spend is recorded (with p_enforce = true: refused when a covering limit would pass its
-- figure), then the grant's use and budget counted. Returns {grant_id (null when none could), recorded, spent}
-- (as policy.record_spend). Expiry is checked on the database's clock.
create or replace function policy.use_grant(p_account text, p_grants text[], p_entry jsonb, p_windows jsonb)
returns jsonb language plpgsql as $$
declare
  amount bigint := (p_entry->>'amount_cents')::bigint;
  chosen text;
  spend jsonb := jsonb_build_object('recorded', false, 'spent', '{}'::jsonb);
begin
  perform pg_advisory_xact_lock(hashtext('policy.spend'), hashtext(p_account));
  select g.id into chosen
  from unnest(p_grants) with ordinality as c(id, n)
  join policy.grants g on g.id = c.id
  where g.account_id = p_account and g.revoked_at is null and g.expires_at > now()
    and (g.max_uses is null or g.uses < g.max_uses)
    and (g.max_amount_cents is null or g.spent_cents + coalesce(amount, 0) <= g.max_amount_cents)
  order by c.n limit 1;
  if chosen is null then
    return jsonb_build_object('grant_id', null, 'recorded', false, 'spent', '{}'::jsonb);
  end if;
  if amount is not null then
    spend := policy.record_spend(p_account, p_entry, p_windows, true);
    if not (spend->>'recorded')::boolean then
      return jsonb_build_object('grant_id', null, 'recorded', false, 'spent', spend->'spent');
    end if;
  end if;
  insert into policy.grant_uses (action_id, grant_id, account_id, amount_cents)
  values (p_entry->>'action_id', chosen, p_account, amount)
  on conflict (action_id) do nothing;
  if found then
    update policy.grants set uses = uses + 1, spent_cents = spent_cents + coalesce(amount, 0) where id = chosen;
  end if;
  return jsonb_build_object('grant_id', chosen, 'recorded', spend->'recorded', 'spent', spend->'spent');
end
$$;

-- Gives back a grant's use by a request that was never stored, under the account's lock; spend itself is released
-- by policy.release_spend. Returns whether a use was recorded for it.
create or replace function policy.release_grant_use(p_account text, p_action_id text)
returns boolean language plpgsql as $$
declare
  gone policy.grant_uses%rowtype;
begin
  perform pg_advisory_xact_lock(hashtext('policy.spend'), hashtext(p_account));
  delete from policy.grant_uses where action_id = p_action_id and account_id = p_account returning * into gone;
  if not found then
    return false;
  end if;
  update policy.grants set uses = greatest(0, uses - 1), spent_cents = greatest(0, spent_cents - coalesce(gone.amount_cents, 0))
  where id = gone.grant_id;
  return true;
end
$$;
