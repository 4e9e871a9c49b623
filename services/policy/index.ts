import type { Bus } from '@agent-auth/bus';
import type { Config } from '@agent-auth/config';
import { migrate, packageDir, type Sql } from '@agent-auth/db';
import type { Logger } from '@agent-auth/logging';
import { policyEndpoints, type EndpointDef } from '@agent-auth/contracts';
import { handle } from '@agent-auth/bus';
import { createAccountPolicyStore } from './store/account-policy.js';
import { createLimitStore } from './store/limits.js';
import { createRuleStore } from './store/rules.js';
import { createSpendStore } from './store/spend.js';
import { settingsHandlers } from './handlers/settings.js';
import { decisionHandlers } from './handlers/decisions.js';
import type { PolicyDeps } from './handlers/deps.js';

/** Migrates the policy schema and serves the policy endpoints on the bus (any number of replicas share them). */
export async function startPolicyService(input: { bus: Bus; sql: Sql; config: Config; log: Logger }) {
  const { sql, log, config } = input;
  await migrate(sql, { schema: 'policy', dir: `${packageDir(import.meta.url)}/store/migrations`, log });
  const deps: PolicyDeps = {
    ...input,
    rules: createRuleStore(sql),
    limits: createLimitStore(sql),
    spend: createSpendStore(sql),
    accountPolicy: createAccountPolicyStore(sql),
    now: () => new Date(),
  };
  const health = handle(policyEndpoints.health as EndpointDef, async () => {
    await sql`select 1`;
    return { ok: true };
  });
  const served = await input.bus.serve({
    name: 'policy',
    version: '0.1.0',
    description: 'Rules, spending limits, automatic decisions and spend accounting',
    handlers: [health, ...settingsHandlers(deps), ...decisionHandlers(deps)],
    concurrency: config.BUS_CONCURRENCY,
    log,
  });
  return {
    async stop() {
      await served.stop();
    },
  };
}
