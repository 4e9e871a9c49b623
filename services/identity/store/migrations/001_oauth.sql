-- OAuth 2.1 for /mcp: the clients, the holder's answers to their authorization requests, and the connections those
-- answers made, with their tokens. Secrets (client secrets, codes, tokens) are stored as their SHA-256 only.

create table if not exists identity.oauth_clients (
  client_id text primary key,
  -- A confidential client's secret; null for a public client (token_endpoint_auth_method none).
  secret_hash text,
  metadata jsonb not null,
  -- Known by its client ID metadata document (client_id is the document's URL) rather than registered here.
  from_document boolean not null default false,
  fetched_at timestamptz,
  created_at timestamptz not null default now()
);

create table if not exists identity.oauth_authorizations (
  id text primary key,
  client_id text not null,
  redirect_uri text not null,
  redirect_uri_given boolean not null,
  code_challenge text not null,
  state text,
  scope text,
  resource text not null,
  issuer text not null,
  expires_at timestamptz not null,
  decided_at timestamptz,
  account_id text,
  agent_id text,
  -- The device (its non-secret ref) whose holder answered.
  decided_by text,
  code_hash text unique,
  code_expires_at timestamptz,
  code_used_at timestamptz,
  connection_id text,
  created_at timestamptz not null default now()
);
create index if not exists oauth_authorizations_created_idx on identity.oauth_authorizations (created_at);

create table if not exists identity.oauth_connections (
  id text primary key,
  account_id text not null,
  agent_id text not null,
  client_id text not null,
  resource text not null,
  scope text,
  -- The device (its non-secret ref) whose holder consented.
  consented_by text not null,
  created_at timestamptz not null default now(),
  refreshed_at timestamptz,
  revoked_at timestamptz,
  revoked_reason text
);
create index if not exists oauth_connections_account_idx on identity.oauth_connections (account_id, created_at desc);
create index if not exists oauth_connections_agent_idx on identity.oauth_connections (agent_id) where revoked_at is null;

create table if not exists identity.oauth_access_tokens (
  hash text primary key,
  connection_id text not null references identity.oauth_connections (id) on delete cascade,
  expires_at timestamptz not null
);
create index if not exists oauth_access_tokens_expiry_idx on identity.oauth_access_tokens (expires_at);
create index if not exists oauth_access_tokens_connection_idx on identity.oauth_access_tokens (connection_id);

-- A refresh token is used once: its use marks it and issues the next; a marked one presented again is a replay,
-- and ends its connection (every token of the family).
create table if not exists identity.oauth_refresh_tokens (
  hash text primary key,
  connection_id text not null references identity.oauth_connections (id) on delete cascade,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create index if not exists oauth_refresh_tokens_expiry_idx on identity.oauth_refresh_tokens (expires_at);
create index if not exists oauth_refresh_tokens_connection_idx on identity.oauth_refresh_tokens (connection_id);
