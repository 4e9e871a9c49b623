-- The bus call that used the newest accepted TOTP step: a send of that same call again (its first replica died or
-- went silent after the code was accepted) is accepted again, instead of refused as a code used twice.
alter table actions.totp add column if not exists last_step_call text;
