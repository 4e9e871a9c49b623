-- Vault credentials. The value is only ever stored as AES-256-GCM ciphertext under the vault keyring (VAULT_KEYS),
-- which only the vault executor holds, bound to the row (credential id and account) so it cannot be moved.
create table if not exists vault.credentials (
  id text primary key,
  account_id text not null,
  service_name text not null,
  auth_type text not null check (auth_type in ('bearer', 'api_key', 'basic', 'custom')),
  auth_header text not null,
  allowed_hosts text[] not null,
  description text,
  value_enc text not null,
  created_at timestamptz not null default now(),
  -- One credential per service name in an account; also the index an execution looks credentials up by.
  unique (account_id, service_name)
);
