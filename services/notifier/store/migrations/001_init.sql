-- Webhook deliveries: one row per resolution event with a callback_url, keyed by the event's id, which is the
-- webhook-id sent on every attempt. Jobs live here, so a notifier killed mid-delivery loses nothing.
create table if not exists notifier.deliveries (
  webhook_id text primary key,
  request_id text not null,
  account_id text not null,
  agent_id text not null,
  callback_url text not null,
  -- The exact bytes signed and sent, identical on every attempt.
  body text not null,
  state text not null default 'pending' check (state in ('pending', 'delivered', 'failed')),
  attempts int not null default 0,
  -- When the next attempt is due; while an attempt runs, the time after which another notifier may take it over.
  next_attempt_at timestamptz not null default now(),
  first_attempt_at timestamptz,
  last_attempt_at timestamptz,
  created_at timestamptz not null default now(),
  finished_at timestamptz
);
-- The delivery loop: due pending jobs.
create index if not exists deliveries_due_idx on notifier.deliveries (next_attempt_at) where state = 'pending';
create index if not exists deliveries_request_idx on notifier.deliveries (request_id);

-- Every attempt: status (null when no response), latency, error. audited_at: reported to the request's audit trail.
create table if not exists notifier.attempts (
  id bigint generated always as identity primary key,
  webhook_id text not null references notifier.deliveries (webhook_id),
  attempt int not null,
  at timestamptz not null default now(),
  status_code int,
  latency_ms int not null,
  error text,
  outcome text not null check (outcome in ('delivered', 'retrying', 'failed')),
  next_attempt_at timestamptz,
  audited_at timestamptz,
  unique (webhook_id, attempt)
);
create index if not exists attempts_unaudited_idx on notifier.attempts (id) where audited_at is null;

-- Web Push subscriptions of devices (used only when a push provider is configured).
create table if not exists notifier.push_subscriptions (
  endpoint text primary key,
  account_id text not null,
  device_ref text not null,
  keys jsonb not null,
  created_at timestamptz not null default now()
);
create index if not exists push_subscriptions_account_idx on notifier.push_subscriptions (account_id);
