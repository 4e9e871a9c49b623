-- Emails waiting to go out (invites, escalations), retried on EMAIL_RETRY_SCHEDULE. `id` is what the email is for
-- (an escalation event and a member, an invite's member): one row per email, however often the cause is delivered.
-- A row is deleted once the SMTP server took it, or given up, so an invite's link (its code) is kept no longer.
create table if not exists notifier.emails (
  id text primary key,
  kind text not null check (kind in ('invite', 'escalation')),
  to_address text not null,
  subject text not null,
  text_body text not null,
  html_body text not null,
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  last_error text,
  created_at timestamptz not null default now()
);
create index if not exists emails_due_idx on notifier.emails (next_attempt_at);

-- Which member a push subscription's device belongs to, so an escalation is pushed to the people it went to only.
alter table notifier.push_subscriptions add column if not exists member_id text;
create index if not exists push_subscriptions_member_idx on notifier.push_subscriptions (member_id)
  where member_id is not null;
