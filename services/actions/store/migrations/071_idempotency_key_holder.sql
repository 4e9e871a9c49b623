-- The database backend (pg_backend_pid) of the replica that claimed a key: a repeat that finds the key unanswered
-- and that backend gone (its process died, or the database restarted) takes the key over at once, instead of waiting
-- for the claim's lease to lapse. Null on rows claimed before it was recorded: those wait for the lease.
alter table actions.idempotency_keys add column if not exists holder_pid int;
