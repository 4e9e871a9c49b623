-- A vault execution's claim names the attempt that holds it: an executor whose claim was committed but whose answer
-- was lost (the bus went down in between) repeats the claim and gets its own claim back instead of a refusal, and a
-- release gives back only the releasing attempt's claim, never another attempt's that may be calling the upstream.
alter table actions.requests add column if not exists execution_claim_id text;
