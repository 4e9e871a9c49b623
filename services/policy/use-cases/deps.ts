import type { AccountPolicyStore } from '../store/account-policy.js';
import type { AccountSettingsStore } from '../store/account-settings.js';
import type { CedarPolicyStore } from '../store/cedar-policies.js';
import type { PolicyCache } from '../store/policy-cache.js';
import type { LimitStore } from '../store/limits.js';
import type { GrantStore } from '../store/grants.js';
import type { RuleStore } from '../store/rules.js';
import type { SpendStore } from '../store/spend.js';
import type { SpendCache } from '../store/spend-cache.js';

/** Everything the policy use cases need, passed in (no singletons). */
export interface PolicyDeps {
  rules: RuleStore;
  limits: LimitStore;
  grants: GrantStore;
  cedarPolicies: CedarPolicyStore;
  accountSettings: AccountSettingsStore;
  spend: SpendStore;
  accountPolicy: AccountPolicyStore;
  /** This replica's copy of each account's rules and limits (dropped on every change, on every replica). */
  policyCache: PolicyCache;
  /** This replica's copy of the running totals read for requests no rule approves (dropped on every spend change). */
  spendCache: SpendCache;
  /** Drops this replica's totals of the account and tells every other replica to: its spend just changed. */
  spendChanged: (accountId: string) => void;
  /** The clock periods are measured on; tests of the pure parts pass their own dates instead. */
  now: () => Date;
}
