-- A fifth status: the agent withdrew its own pending request (`cancelled`, resolved_by `agent`).
alter table actions.requests drop constraint if exists requests_status_check;
alter table actions.requests add constraint requests_status_check
  check (status in ('pending', 'approved', 'denied', 'expired', 'cancelled'));

-- Approve with changes: the input the holder edited (sealed like metadata) and its digest, which the receipt and
-- the audit entry state beside the original content hash.
alter table actions.requests add column if not exists updated_input_enc text;
alter table actions.requests add column if not exists updated_input_hash text;

-- A coding agent's hook call: a retried call (same tool_use_id, or the same session, tool and input) finds the
-- request its first call made instead of making a second one. One row per request made through a hook.
create table if not exists actions.tool_calls (
  request_id text primary key,
  agent_id text not null,
  join_key text not null,
  client text not null,
  created_at timestamptz not null default now()
);
create index if not exists tool_calls_join on actions.tool_calls (agent_id, join_key, created_at desc);
