-- Quorum rules: a matching request waits until `quorum` distinct devices of the account approve it.
alter table policy.rules add column if not exists quorum integer check (quorum between 2 and 10);
alter table policy.rules drop constraint if exists rules_decision_check;
alter table policy.rules add constraint rules_decision_check
  check (decision in ('auto_approve', 'auto_deny', 'require_quorum'));
alter table policy.rules drop constraint if exists rules_quorum_decision_check;
alter table policy.rules add constraint rules_quorum_decision_check
  check ((decision = 'require_quorum') = (quorum is not null));
