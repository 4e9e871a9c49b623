-- OpenID Connect CIBA (docs/api-guide.md, "CIBA"). An agent's ping endpoint, set by its holder: a client with one
-- may ask in ping mode. Revoking the agent leaves the row, which nothing reads any more.
create table if not exists actions.ciba_clients (
  agent_id text primary key,
  notification_endpoint text not null,
  updated_at timestamptz not null default now()
);

-- One CIBA request: the opaque auth_req_id the client polls with, the action request it made (stored before the
-- request, so a ping finds it even when a rule settles the request at once), the client's last poll and its
-- interval (kept here, so slow_down holds across gateway and actions replicas), the ping's bearer token (sealed),
-- and when tokens were issued (once).
create table if not exists actions.ciba_requests (
  auth_req_id text primary key,
  action_id text not null unique,
  agent_id text not null,
  account_id text not null,
  mode text not null check (mode in ('poll', 'ping')),
  interval_seconds integer not null,
  last_polled_at timestamptz,
  notification_token_enc text,
  expires_at timestamptz not null,
  issued_at timestamptz,
  created_at timestamptz not null default now()
);
-- The pruning of expired rows walks this.
create index if not exists ciba_requests_expires on actions.ciba_requests (expires_at);
