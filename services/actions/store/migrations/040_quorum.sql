-- Quorum rules: a request a quorum rule matched waits for `quorum_required` distinct devices; each
-- approval so far is kept on the request itself ({device_id, method, at, signed}), so the action object and the
-- pending list show the quorum without another read, and one conditional update adds an approval.
alter table actions.requests add column if not exists quorum_required integer;
alter table actions.requests add column if not exists quorum_approvals jsonb not null default '[]'::jsonb;
