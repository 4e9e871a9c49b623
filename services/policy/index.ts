import type { Bus } from '@agent-auth/bus';
import type { PolicySettings } from '@agent-auth/config';
import { policyChanged, policyEndpoints, spendChanged } from '@agent-auth/contracts';
import { packageDir, type Sql } from '@agent-auth/db';
import { serveBusService } from '@agent-auth/lifecycle';
import type { Logger } from '@agent-auth/logging';
import { decisionHandlers } from './handlers/decisions.js';
import { settingsHandlers } from './handlers/settings.js';
import { policyLanguageHandlers } from './handlers/policies.js';
import { createAccountPolicyStore } from './store/account-policy.js';
import { createAccountSettingsStore } from './store/account-settings.js';
import { createCedarPolicyStore } from './store/cedar-policies.js';
import { createLimitStore } from './store/limits.js';
import { createGrantStore } from './store/grants.js';
import { createRuleStore } from './store/rules.js';
import { createPolicyCache } from './store/policy-cache.js';
import { createSpendStore } from './store/spend.js';
import { createSpendCache } from './store/spend-cache.js';
import { createDecisions } from './use-cases/decisions.js';
import type { PolicyDeps } from './use-cases/deps.js';
import { createSettings } from './use-cases/settings.js';
import { createPolicies } from './use-cases/policies.js';

/** How long a replica keeps an account's rules and limits without hearing of a change (bounds a lost event). */
const POLICY_CACHE_TTL_MS = 30_000;
/** Accounts whose rules and limits one replica keeps at once. */
const POLICY_CACHE_ACCOUNTS = 50_000;

/** Migrates the policy schema and serves the policy endpoints on the bus (any number of replicas share them). */
export async function startPolicyService(input: { bus: Bus; sql: Sql; settings: PolicySettings; log: Logger }) {
  const { sql, bus } = input;
  const accountPolicy = createAccountPolicyStore(sql);
  const policyCache = createPolicyCache({
    load: (accountId) => accountPolicy.load(accountId),
    ttlMs: POLICY_CACHE_TTL_MS,
    maxAccounts: POLICY_CACHE_ACCOUNTS,
  });
  const spendCache = createSpendCache({ ttlMs: POLICY_CACHE_TTL_MS, maxAccounts: POLICY_CACHE_ACCOUNTS });
  // Subscribed before serving, so no change another replica makes once this one decides goes unheard.
  const unsubscribePolicy = bus.subscribe(policyChanged, ({ account_id }) => policyCache.invalidate(account_id));
  const unsubscribeSpend = bus.subscribe(spendChanged, ({ account_id }) => spendCache.invalidate(account_id));
  const deps: PolicyDeps = {
    rules: createRuleStore(sql),
    limits: createLimitStore(sql),
    grants: createGrantStore(sql),
    cedarPolicies: createCedarPolicyStore(sql),
    accountSettings: createAccountSettingsStore(sql),
    spend: createSpendStore(sql),
    accountPolicy,
    policyCache,
    spendCache,
    spendChanged: (accountId) => {
      spendCache.invalidate(accountId);
      bus.publish(spendChanged, { account_id: accountId });
    },
    now: () => new Date(),
  };
  const announceChange = (accountId: string) => bus.publish(policyChanged, { account_id: accountId });
  const served = await serveBusService({
    ...input,
    name: 'policy',
    description: 'Rules, Cedar policies, spending limits, automatic decisions and spend accounting',
    migrations: { schema: 'policy', dir: `${packageDir(import.meta.url)}/store/migrations` },
    health: policyEndpoints.health,
    handlers: [
      ...settingsHandlers(createSettings({ ...deps, announceChange })),
      ...policyLanguageHandlers(createPolicies({ ...deps, announceChange })),
      ...decisionHandlers(createDecisions(deps)),
    ],
    concurrency: input.settings.BUS_CONCURRENCY,
  });
  return {
    async stop() {
      await served.stop();
      unsubscribePolicy();
      unsubscribeSpend();
    },
  };
}
