-- The bus call that had a passkey assertion accepted: a send of that same call again (its first replica died or went
-- silent after the assertion was accepted, before it answered) is accepted again, instead of refused as a replay.
alter table actions.passkey_assertions add column if not exists call_id text;
