-- Passkeys (WebAuthn) of devices: approvals verified by the platform authenticator.
-- credential_id is the authenticator's id (base64url); public_key the COSE key as registered; sign_count the newest
-- counter accepted, raised only by a conditional update so an assertion is never accepted twice.
create table if not exists actions.passkeys (
  id text primary key,
  account_id text not null references actions.accounts (id),
  device_ref text not null references actions.devices (ref),
  credential_id text not null unique,
  public_key bytea not null,
  sign_count bigint not null default 0,
  transports jsonb not null default '[]',
  rp_id text not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz
);
create index if not exists passkeys_device_idx on actions.passkeys (device_ref);

-- Registration challenges: issued by POST /device/passkeys/options, used once, short-lived.
create table if not exists actions.webauthn_challenges (
  challenge text primary key,
  device_ref text not null references actions.devices (ref),
  rp_id text not null,
  expires_at timestamptz not null
);
create index if not exists webauthn_challenges_expiry_idx on actions.webauthn_challenges (expires_at);

-- Assertions accepted per passkey (their challenge: the approval message's digest), so an authenticator that keeps
-- no counter (synced passkeys report 0) still cannot have one assertion accepted twice.
create table if not exists actions.passkey_assertions (
  passkey_id text not null references actions.passkeys (id) on delete cascade,
  challenge text not null,
  at timestamptz not null default now(),
  primary key (passkey_id, challenge)
);

-- How a person's decision was verified: true when a passkey verified the holder (user verification), and which.
alter table actions.requests add column if not exists user_verified boolean not null default false;
alter table actions.requests add column if not exists passkey_id text;
