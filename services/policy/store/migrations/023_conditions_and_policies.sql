-- Conditions on a rule: all must hold for it to apply (JSON, as POST /rules took them); null: none.
alter table policy.rules add column if not exists conditions jsonb;

-- Cedar policies of each account, consulted in creation order after the rules when none matched.
create table if not exists policy.cedar_policies (
  id text primary key,
  seq bigint generated always as identity,
  account_id text not null,
  name text not null,
  cedar text not null,
  created_at timestamptz not null default now()
);
create index if not exists cedar_policies_account_seq_idx on policy.cedar_policies (account_id, seq);

-- Each account's settings for decisions: the time zone `local_hour` and `weekday` conditions are read in. An account
-- without a row is on UTC.
create table if not exists policy.account_settings (
  account_id text primary key,
  timezone text not null default 'UTC',
  updated_at timestamptz not null default now()
);
