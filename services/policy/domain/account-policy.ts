import type { PreparedPolicies } from '@agent-auth/policy-language';
import type { GrantScope } from './grant-matching.js';
import type { CedarPolicyRow, LimitRow, RuleRow } from './rows.js';

/** A rule as a decision reads it: its account is the one asking. */
export type DecisionRule = Pick<
  RuleRow,
  | 'id'
  | 'name'
  | 'decision'
  | 'action_type'
  | 'agent_id'
  | 'risk_level_max'
  | 'amount_max_cents'
  | 'quorum'
  | 'conditions'
  | 'approvers'
  | 'escalate_after_seconds'
  | 'escalate_to'
  | 'created_at'
>;
/** A Cedar policy as a decision reads it. */
export type DecisionCedarPolicy = Pick<CedarPolicyRow, 'id' | 'name' | 'cedar' | 'created_at'>;
/** A spending limit as a decision reads it (its running total comes from the spend store). */
export type PolicyLimit = Pick<
  LimitRow,
  'id' | 'period' | 'amount_limit_cents' | 'agent_id' | 'action_type' | 'created_at'
>;

/** What a decision needs of an account: its rules and limits, each in creation order (without spend). */
export interface AccountPolicy {
  rules: DecisionRule[];
  /** The rules that name approvers or an escalation, in order (empty for most accounts). */
  routing: DecisionRule[];
  limits: PolicyLimit[];
  /**
   * The account's standing grants that were live with uses and budget left when loaded; empty for
   * most accounts, so a decision looks no further. Use is counted in the database, under the lock.
   */
  grants: GrantScope[];
  /** The Cedar policies in creation order, consulted when no rule matched; `cedar` is them parsed (null: none). */
  policies: DecisionCedarPolicy[];
  cedar: PreparedPolicies | null;
  /** The time zone of `local_hour` and `weekday` conditions (an IANA name; UTC unless the account set one). */
  timezone: string;
  /** The receipts' policy_version of exactly these rules, limits, policies and time zone. */
  version: string;
}
