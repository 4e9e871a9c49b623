import { policyVersion } from '@agent-auth/contracts';
import type { AccountPolicy } from './account-policy.js';
import { toLimitView, toPolicyView, toRuleView } from './views.js';

/**
 * The receipts' policy_version of an account's rules, limits, Cedar policies and time zone: hashed as GET /rules,
 * /spending-limits, /policies and /account/settings show them.
 */
export function versionOf(
  accountId: string,
  policy: Pick<AccountPolicy, 'rules' | 'limits'> & Partial<Pick<AccountPolicy, 'policies' | 'timezone'>>,
): string {
  return policyVersion(
    policy.rules.map((r) => toRuleView({ ...r, account_id: accountId })),
    policy.limits.map((l) => toLimitView({ ...l, account_id: accountId })),
    {
      policies: (policy.policies ?? []).map((p) => toPolicyView({ ...p, account_id: accountId })),
      timezone: policy.timezone,
    },
  );
}
