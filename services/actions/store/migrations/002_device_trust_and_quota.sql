-- TOTP belongs to the account (one authenticator for the holder). The secret is encrypted with the actions keyring.
-- last_step is the newest TOTP time step accepted: a code is accepted only by a conditional update that raises it,
-- so a code (or an older one) is never accepted twice, even by two concurrent approvals.
-- failures / failures_since throttle wrong guesses per account in a fixed window.
create table if not exists actions.totp (
  account_id text primary key references actions.accounts (id),
  secret_enc text not null,
  last_step bigint not null default -1,
  failures int not null default 0,
  failures_since timestamptz,
  created_at timestamptz not null default now()
);

-- Plan quota: actions created per account per calendar month (UTC). The row is raised by a conditional upsert,
-- so concurrent creations can never pass the quota.
create table if not exists actions.monthly_usage (
  account_id text not null references actions.accounts (id),
  month date not null,
  actions int not null default 0,
  primary key (account_id, month)
);

