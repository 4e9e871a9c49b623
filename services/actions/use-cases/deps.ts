import type { Bus } from '@agent-auth/bus';
import type { Keyring } from '@agent-auth/encryption';
import type { Logger } from '@agent-auth/logging';
import type { PolicyDecider } from '../adapters/policy.js';
import type { ActionsSettings } from '@agent-auth/config';
import type { AccountStore } from '../store/accounts.js';
import type { IdentityStore } from '../store/identities.js';
import type { MemberStore } from '../store/members.js';
import type { RequestStore } from '../store/requests.js';
import type { TotpStore } from '../store/totp.js';
import type { PasskeyStore } from '../store/passkeys.js';
import type { AuditChainStore } from '../store/audit-chain.js';
import type { AuditCutStore } from '../store/audit-cuts.js';
import type { ReceiptKeys } from '../domain/receipt-keys.js';
import type { ReceiptIssuer } from './receipts.js';
import type { IdempotencyStore } from '../store/idempotency.js';
import type { ToolCallStore } from '../store/tool-calls.js';
import type { RequestHistoryStore } from '../store/request-history.js';
import type { CibaStore } from '../store/ciba.js';

/** Everything the actions use cases may need, passed in (no singletons); each use case takes only its part. */
export interface ActionsDeps {
  bus: Bus;
  keyring: Keyring;
  settings: ActionsSettings;
  log: Logger;
  policy: PolicyDecider;
  requests: RequestStore;
  identities: IdentityStore;
  members: MemberStore;
  totp: TotpStore;
  accounts: AccountStore;
  passkeys: PasskeyStore;
  auditChain: AuditChainStore;
  auditCuts: AuditCutStore;
  receiptKeys: ReceiptKeys;
  receipts: ReceiptIssuer;
  idempotency: IdempotencyStore;
  toolCalls: ToolCallStore;
  requestHistory: RequestHistoryStore;
  ciba: CibaStore;
}
