-- No NOTIFY inside a request's transaction: a notifying transaction takes a database-wide lock at commit, which
-- serialized every create's commit (and its WAL flush) across the whole server. The process that commits wakes its
-- own relay in-process and tells the other processes' relays itself, after commit and at most once per short
-- interval (outbox-relay.ts).
drop trigger if exists outbox_notify on actions.outbox;
drop function if exists actions.outbox_notify();
