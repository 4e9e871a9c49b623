-- A creating statement's outbox row no longer keeps a snapshot of the new request (0.4 kB of the 3.1 kB of WAL a
-- create wrote): its writer publishes the event from the row it sent, and a relay that takes the row over builds
-- the same event from the request row (as created: a creation's fields do not change, a later decision's are reset).
alter table actions.outbox alter column action drop not null;
