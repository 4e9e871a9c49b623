-- Sign-in with the company's OpenID Connect provider. Each sign-in under way, by the SHA-256 of its state, with what
-- finishing it needs (its PKCE verifier and nonce, which only this service and the provider see) and the SHA-256 of
-- the browser's binding cookie; and each finished one's ticket, by its SHA-256, which the device app redeems once for
-- a new device. Both live minutes and are taken in one statement (single use on any number of replicas).
create table if not exists identity.oidc_sign_ins (
  state_hash text primary key,
  binding_hash text not null,
  nonce text not null,
  code_verifier text not null,
  redirect_uri text not null,
  device_name text,
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);

create table if not exists identity.oidc_tickets (
  ticket_hash text primary key,
  email text not null,
  device_name text,
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);
