-- Tables whose rows are inserted and soon deleted (the outbox, idempotency keys) are never cut back by a vacuum,
-- autovacuum included: cutting the empty pages at a table's end takes an ACCESS EXCLUSIVE lock, and every create's
-- insert into the outbox waits behind it. Their pages are filled again at once, reused in place.
alter table actions.outbox set (vacuum_truncate = false);
alter table actions.idempotency_keys set (vacuum_truncate = false);
