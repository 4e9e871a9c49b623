import type { Bus } from '@agent-auth/bus';
import type { Config } from '@agent-auth/config';
import type { Sql } from '@agent-auth/db';
import type { Logger } from '@agent-auth/logging';
import type { AccountPolicyStore } from '../store/account-policy.js';
import type { LimitStore } from '../store/limits.js';
import type { RuleStore } from '../store/rules.js';
import type { SpendStore } from '../store/spend.js';

/** Everything the policy handlers need, passed in (no singletons). */
export interface PolicyDeps {
  bus: Bus;
  sql: Sql;
  config: Config;
  log: Logger;
  rules: RuleStore;
  limits: LimitStore;
  spend: SpendStore;
  accountPolicy: AccountPolicyStore;
  /** The clock periods are measured on; tests of the pure parts pass their own dates instead. */
  now: () => Date;
}
