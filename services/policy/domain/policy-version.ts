import { policyVersion } from '@agent-auth/contracts';
import type { AccountPolicy } from './account-policy.js';
import { toLimitView, toRuleView } from './views.js';

/** The receipts' policy_version of an account's rules and limits: hashed as GET /rules and /spending-limits show them. */
export function versionOf(accountId: string, policy: Pick<AccountPolicy, 'rules' | 'limits'>): string {
  return policyVersion(
    policy.rules.map((r) => toRuleView({ ...r, account_id: accountId })),
    policy.limits.map((l) => toLimitView({ ...l, account_id: accountId })),
  );
}
