-- Routing on rules: `ask` leaves a request to people; an `ask` or `require_quorum` rule may name its approvers
-- (member ids or role:<role>) and hand a request still pending after escalate_after_seconds to escalate_to too.
alter table policy.rules drop constraint if exists rules_decision_check;
alter table policy.rules add constraint rules_decision_check
  check (decision in ('auto_approve', 'auto_deny', 'require_quorum', 'ask'));
alter table policy.rules add column if not exists approvers text[];
alter table policy.rules add column if not exists escalate_after_seconds integer
  check (escalate_after_seconds between 5 and 86400);
alter table policy.rules add column if not exists escalate_to text[];
alter table policy.rules drop constraint if exists rules_escalation_check;
alter table policy.rules add constraint rules_escalation_check
  check ((escalate_after_seconds is null) = (escalate_to is null));
