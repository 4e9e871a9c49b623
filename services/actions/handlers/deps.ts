import type { Bus } from '@agent-auth/bus';
import type { Config } from '@agent-auth/config';
import type { Sql } from '@agent-auth/db';
import type { Keyring } from '@agent-auth/encryption';
import type { Logger } from '@agent-auth/logging';
import type { IdentityStore } from '../store/identities.js';
import type { RequestStore } from '../store/requests.js';
import type { TotpStore } from '../store/totp.js';
import type { AccountStore } from '../store/accounts.js';
import type { PolicyDecider } from './decision.js';

/** Everything the actions handlers need, passed in (no singletons). */
export interface ActionsDeps {
  bus: Bus;
  sql: Sql;
  keyring: Keyring;
  config: Config;
  log: Logger;
  policy: PolicyDecider;
  requests: RequestStore;
  identities: IdentityStore;
  totp: TotpStore;
  accounts: AccountStore;
}
