-- Verifiable decisions: a request's receipt is written in the statement that resolves it, beside the
-- hash of what the holder was shown (computed once, at creation, while the metadata is in the clear).
alter table actions.requests add column if not exists request_hash text;
alter table actions.requests add column if not exists receipt text;
-- The version of the account's rules and limits the policy decided this request under at creation (resolving it,
-- or leaving it to a person): the receipt's policy_version whoever resolves it.
alter table actions.requests add column if not exists policy_version text;

-- Each account's audit events form a hash chain. Events are written on the request path without any per-account
-- ordering; the sealer (workers/audit-sealer.ts) later gives each its place (seq), the previous event's hash and its
-- own hash, once. sealed_at is when it did (the sealing lag), not part of the hash.
alter table actions.audit_events add column if not exists seq bigint;
alter table actions.audit_events add column if not exists prev_hash text;
alter table actions.audit_events add column if not exists hash text;
alter table actions.audit_events add column if not exists sealed_at timestamptz;
-- GET /audit reads an account's chain in seq order; unique so that no two events ever share a place.
create unique index if not exists audit_chain_idx on actions.audit_events (account_id, seq) where seq is not null;
-- The sealer's work list: events not sealed yet, per account, in the order they were written.
create index if not exists audit_unsealed_idx on actions.audit_events (account_id, id) where hash is null;
-- GET /actions/{id}/audit.
create index if not exists audit_request_seq_idx on actions.audit_events (request_id, seq);

-- Still append-only: the one change allowed is sealing an unsealed event (setting its chain fields from nothing),
-- and nothing an event says (who, what, when) may change while doing so. Deletes stay refused.
create or replace function actions.audit_is_append_only() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' and old.hash is null and old.seq is null and old.prev_hash is null
     and new.hash is not null and new.seq is not null and new.prev_hash is not null
     and (new.id, new.request_id, new.account_id, new.event, new.actor, new.detail, new.at)
         is not distinct from (old.id, old.request_id, old.account_id, old.event, old.actor, old.detail, old.at) then
    return new;
  end if;
  raise exception 'actions.audit_events is append-only';
end $$;
