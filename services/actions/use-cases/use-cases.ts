import { createAccounts } from './accounts.js';
import { createActionCreation } from './create-action.js';
import { createIdempotentCreation } from './create-once.js';
import type { ActionsDeps } from './deps.js';
import { createExecution } from './execute-action.js';
import { createExpiry } from './expiry.js';
import { createIdentities } from './identities.js';
import { createMembers } from './members.js';
import { createMetadataSeal } from './metadata.js';
import { createPasskeys } from './passkeys.js';
import { createActionReading } from './read-actions.js';
import { createResolution } from './resolve-action.js';
import { createTotp } from './totp.js';
import { createWebhookSigning } from './webhooks.js';
import { createAuditChain } from './audit-chain.js';
import { createAuditRetention } from './audit-retention.js';
import { createGrants } from './grants.js';
import { createCancellation } from './cancel-action.js';
import { createToolCalls } from './tool-calls.js';
import { createRuleReplay } from './rule-replay.js';
import { createCiba } from './ciba.js';

/** Every operation of the actions service, each built from only the dependencies it uses. */
export function createUseCases(deps: ActionsDeps) {
  const metadata = createMetadataSeal(deps.keyring);
  const expiry = createExpiry(deps);
  const totp = createTotp(deps);
  const passkeys = createPasskeys(deps);
  const grants = createGrants(deps);
  const create = createActionCreation({ ...deps, metadata });
  const reading = createActionReading({ ...deps, expiry, metadata });
  return {
    createAction: createIdempotentCreation({ ...deps, metadata, create }),
    createToolCall: createToolCalls({ ...deps, create, expiry, metadata }),
    cancel: createCancellation({ ...deps, expiry, metadata }),
    reading,
    resolution: createResolution({ ...deps, expiry, metadata, totp, passkeys, grants }),
    grants,
    passkeys,
    execution: createExecution({ ...deps, expiry, metadata }),
    expiry,
    totp,
    identities: createIdentities(deps),
    members: createMembers(deps),
    accounts: createAccounts(deps),
    webhooks: createWebhookSigning(deps),
    auditChain: createAuditChain(deps),
    auditRetention: createAuditRetention(deps),
    ruleReplay: createRuleReplay({ ...deps, metadata }),
    ciba: createCiba({ ...deps, create, reading }),
  };
}
export type UseCases = ReturnType<typeof createUseCases>;
