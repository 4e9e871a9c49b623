-- An unlimited account's monthly count is read from its requests instead of a counter row that every creation
-- would have to lock and commit: one hot row per account would queue all of a busy account's creations.
create index if not exists requests_account_created_idx on actions.requests (account_id, created_at);
