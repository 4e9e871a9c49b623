-- Routing of a request left to people, as the matching rules said at its creation: `approvers` (member ids or
-- role:<role>; null: every member who may approve), and `escalate_to` from `escalate_at` on, once the escalation
-- (escalated_at) is done. Roles are matched when a member looks, so a member who joins with the role sees it too.
alter table actions.requests add column if not exists approvers text[];
alter table actions.requests add column if not exists escalate_at timestamptz;
alter table actions.requests add column if not exists escalate_to text[];
alter table actions.requests add column if not exists escalated_at timestamptz;

-- The escalations still to do: the scheduler of every replica reads the due ones from here, oldest first.
create index if not exists requests_escalation_due_idx on actions.requests (escalate_at)
  where status = 'pending' and escalated_at is null and escalate_at is not null;

-- The escalation's event goes out through the outbox like every change of a request.
alter table actions.outbox drop constraint if exists outbox_type_check;
alter table actions.outbox add constraint outbox_type_check
  check (type in ('action.created', 'action.resolved', 'action.escalated'));
