-- Transactional outbox: every change a request goes through that others must hear about (created pending,
-- approved, denied, expired) writes its event here in the same statement. A relay publishes the rows to the
-- action event stream and marks them published. id is the event's identity (and its webhook's webhook-id).
create table if not exists actions.outbox (
  id text primary key default ('msg_' || replace(gen_random_uuid()::text, '-', '')),
  seq bigint generated always as identity,
  type text not null check (type in ('action.created', 'action.resolved')),
  account_id text not null,
  agent_id text not null,
  request_id text not null,
  callback_url text,
  action jsonb not null,
  created_at timestamptz not null default now(),
  -- A relay holds a row while publishing it; another relay takes it over once this passes.
  claimed_until timestamptz,
  published_at timestamptz
);
-- The relay: unpublished rows in order.
create index if not exists outbox_unpublished_idx on actions.outbox (seq) where published_at is null;
-- Clean-up of published rows.
create index if not exists outbox_published_idx on actions.outbox (published_at) where published_at is not null;

-- Wakes the relays of other processes (LISTEN actions_outbox) when rows commit; delivered at commit time.
create or replace function actions.outbox_notify() returns trigger language plpgsql as $$
begin
  perform pg_notify('actions_outbox', '');
  return null;
end $$;
drop trigger if exists outbox_notify on actions.outbox;
create trigger outbox_notify after insert on actions.outbox
  for each statement execute function actions.outbox_notify();
