import type { GrantScope } from './grant-matching.js';
import type { LimitRow, RuleRow } from './rows.js';

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
  | 'created_at'
>;
/** A spending limit as a decision reads it (its running total comes from the spend store). */
export type PolicyLimit = Pick<
  LimitRow,
  'id' | 'period' | 'amount_limit_cents' | 'agent_id' | 'action_type' | 'created_at'
>;

/** What a decision needs of an account: its rules and limits, each in creation order (without spend). */
export interface AccountPolicy {
  rules: DecisionRule[];
  limits: PolicyLimit[];
  /**
   * The account's standing grants that were live with uses and budget left when loaded; empty for
   * most accounts, so a decision looks no further. Use is counted in the database, under the lock.
   */
  grants: GrantScope[];
  /** The receipts' policy_version of exactly these rules and limits. */
  version: string;
}
