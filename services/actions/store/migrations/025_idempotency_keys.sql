-- POST /actions with an Idempotency-Key: one row per agent and key, so the database itself makes a key
-- name one request however many replicas see it at once. The action id is fixed when the key is first claimed, so
-- a retry after a crash creates (or finds) the same request, counted once with it; the first answer is kept
-- encrypted (it carries the request's metadata). Rows older than 24 h are pruned and ignored.
create table if not exists actions.idempotency_keys (
  agent_id text not null,
  key text not null,
  body_hash text not null,
  action_id text not null,
  claimed_until timestamptz not null,
  response_status int,
  response_enc text,
  created_at timestamptz not null default now(),
  primary key (agent_id, key)
);
create index if not exists idempotency_keys_created_idx on actions.idempotency_keys (created_at);
