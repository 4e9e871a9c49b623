-- Accounts, their devices and agents, action requests and their append-only audit trail.
create table if not exists actions.accounts (
  id text primary key,
  plan text not null default 'free' check (plan in ('free', 'unlimited')),
  created_at timestamptz not null default now()
);

-- A device id is a bearer credential: only its SHA-256 is kept. ref is the non-secret handle used in audit.
create table if not exists actions.devices (
  ref text primary key,
  id_hash text not null unique,
  account_id text not null references actions.accounts (id),
  name text,
  public_key text,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
create index if not exists devices_account_idx on actions.devices (account_id);

-- API keys are aa_<key_id>_<secret>; key_id finds the row, key_hash (argon2id) proves the secret.
create table if not exists actions.agents (
  id text primary key,
  account_id text not null references actions.accounts (id),
  name text not null,
  key_id text not null unique,
  key_hash text not null,
  webhook_secret_enc text not null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
create index if not exists agents_account_idx on actions.agents (account_id);

create table if not exists actions.requests (
  id text primary key,
  account_id text not null references actions.accounts (id),
  agent_id text not null references actions.agents (id),
  action_type text not null,
  title text not null,
  description text,
  risk_level text not null,
  risk_rank smallint not null,
  reversible boolean not null,
  amount_cents bigint,
  currency text not null,
  recipient text,
  metadata_enc text,
  callback_url text,
  content_hash text,
  status text not null check (status in ('pending', 'approved', 'denied', 'expired')),
  rule_applied text,
  resolved_by text,
  resolved_at timestamptz,
  reason text,
  spending_limit_exceeded jsonb,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
-- GET /actions: one agent's requests, newest first.
create index if not exists requests_agent_created_idx on actions.requests (agent_id, created_at desc);
-- GET /pending: an account's pending requests, critical first, then oldest first.
create index if not exists requests_pending_idx on actions.requests (account_id, risk_rank desc, created_at) where status = 'pending';
-- The expiry sweeper.
create index if not exists requests_expiry_idx on actions.requests (expires_at) where status = 'pending';

create table if not exists actions.audit_events (
  id bigint generated always as identity primary key,
  request_id text,
  account_id text not null,
  event text not null,
  actor text not null,
  detail jsonb not null default '{}',
  at timestamptz not null default now()
);
create index if not exists audit_request_idx on actions.audit_events (request_id, id);

-- The audit trail is evidence: refuse any change to a row once written.
create or replace function actions.audit_is_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'actions.audit_events is append-only';
end $$;
drop trigger if exists audit_append_only on actions.audit_events;
create trigger audit_append_only before update or delete on actions.audit_events
  for each row execute function actions.audit_is_append_only();
