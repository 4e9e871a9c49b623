-- A create inserted its request after two foreign-key checks: a lookup of the account and of the agent, each taking a
-- KEY SHARE lock on that row, so every concurrent create of one busy agent shared (multixact) locks on the same
-- two rows. They protected nothing: accounts and agents are never deleted (an agent is revoked, its row stays), and
-- a request's account and agent come from the principal the service has just authenticated from those rows.
alter table actions.requests drop constraint if exists requests_account_id_fkey;
alter table actions.requests drop constraint if exists requests_agent_id_fkey;
