-- Rules and spending limits of each account, and the spend that limits are measured against.
-- account_id and agent_id name rows of the actions schema; there are no foreign keys across schemas,
-- so each service can live on its own database later.

-- seq is the creation order that rule evaluation follows (created_at can tie).
create table if not exists policy.rules (
  id text primary key,
  seq bigint generated always as identity,
  account_id text not null,
  name text not null,
  decision text not null check (decision in ('auto_approve', 'auto_deny')),
  action_type text,
  agent_id text,
  risk_level_max text check (risk_level_max in ('low', 'medium', 'high', 'critical')),
  amount_max_cents bigint check (amount_max_cents >= 0),
  created_at timestamptz not null default now()
);
create index if not exists rules_account_seq_idx on policy.rules (account_id, seq);

-- Limits are in USD cents, the unit every stored amount uses.
create table if not exists policy.spending_limits (
  id text primary key,
  seq bigint generated always as identity,
  account_id text not null,
  period text not null check (period in ('daily', 'weekly', 'monthly')),
  amount_limit_cents bigint not null check (amount_limit_cents > 0),
  agent_id text,
  action_type text,
  created_at timestamptz not null default now()
);
create index if not exists spending_limits_account_seq_idx on policy.spending_limits (account_id, seq);

-- One row per approved action with an amount, whoever approved it. Keyed by the action so that recording is
-- idempotent (a retried or raced approval counts once) and a release removes exactly what was recorded.
create table if not exists policy.spend (
  action_id text primary key,
  account_id text not null,
  agent_id text not null,
  action_type text not null,
  amount_cents bigint not null check (amount_cents > 0),
  currency text not null,
  approved_by text not null check (approved_by in ('rule', 'person')),
  approved_at timestamptz not null
);
-- The spent-in-window sum of a limit check: one account's spend in a time range.
create index if not exists spend_account_time_idx on policy.spend (account_id, approved_at);
