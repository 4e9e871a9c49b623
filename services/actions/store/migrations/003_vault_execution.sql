-- A vault execution request runs once: the executor claims it by setting execution_started_at, conditionally.
alter table actions.requests add column if not exists execution_started_at timestamptz;
