-- Creates are stored several to a statement (store/request-inserts.ts). A free account's counter is raised by the
-- statement's count at once, capped at the quota; the statement must learn how many of its requests that raise let
-- in, and an upsert cannot return the count it replaced: the raise keeps what it granted here.
alter table actions.monthly_usage add column if not exists last_counted integer not null default 0;
