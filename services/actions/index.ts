import type { Bus } from '@agent-auth/bus';
import type { Config } from '@agent-auth/config';
import { migrate, packageDir, type Sql } from '@agent-auth/db';
import type { Keyring } from '@agent-auth/encryption';
import type { Logger } from '@agent-auth/logging';
import { actionsEndpoints, type EndpointDef } from '@agent-auth/contracts';
import { handle } from '@agent-auth/bus';
import { createIdentityStore } from './store/identities.js';
import { createRequestStore } from './store/requests.js';
import { createTotpStore } from './store/totp.js';
import { createAccountStore } from './store/accounts.js';
import { actionHandlers } from './handlers/actions.js';
import { identityHandlers } from './handlers/identities.js';
import { resolutionHandlers } from './handlers/resolution.js';
import { accountHandlers } from './handlers/accounts.js';
import { executionHandlers } from './handlers/execution.js';
import { startExpirySweeper } from './handlers/expiry.js';
import { createOutboxStore } from './store/outbox.js';
import { startOutboxRelay, type OutboxRelay } from './handlers/outbox-relay.js';
import { webhookHandlers } from './handlers/webhooks.js';
import { noAutomaticDecisions, type PolicyDecider } from './handlers/decision.js';
import type { ActionsDeps } from './handlers/deps.js';

export type { PolicyDecider, Decision, DecisionInput, SpendInput } from './handlers/decision.js';
export { policyOverBus } from './handlers/policy-client.js';

/**
 * Migrates the actions schema, serves the actions endpoints on the bus, runs the expiry sweeper and the outbox
 * relay. `listen: false` keeps the relay off LISTEN/NOTIFY (the embedded database has a single connection).
 */
export async function startActionsService(input: { bus: Bus; sql: Sql; keyring: Keyring; config: Config; log: Logger; policy?: PolicyDecider; listen?: boolean }) {
  const { sql, log, config } = input;
  await migrate(sql, { schema: 'actions', dir: `${packageDir(import.meta.url)}/store/migrations`, log });
  let relay: OutboxRelay | undefined;
  const deps: ActionsDeps = {
    ...input,
    policy: input.policy ?? noAutomaticDecisions,
    requests: createRequestStore(sql, () => relay?.wake()),
    identities: createIdentityStore(sql),
    totp: createTotpStore(sql),
    accounts: createAccountStore(sql),
  };
  relay = startOutboxRelay({ outbox: createOutboxStore(sql), stream: input.bus.actionEvents, sql, listen: input.listen ?? true, pollMs: config.RELAY_POLL_MS, log: log.child({ component: 'outbox-relay' }) });
  const health = handle(actionsEndpoints.health as EndpointDef, async () => {
    await sql`select 1`;
    return { ok: true };
  });
  const served = await input.bus.serve({
    name: 'actions',
    version: '0.1.0',
    description: 'Action requests, identities, approvals and expiry',
    handlers: [health, ...identityHandlers(deps), ...accountHandlers(deps), ...actionHandlers(deps), ...resolutionHandlers(deps), ...executionHandlers(deps), ...webhookHandlers(deps)],
    concurrency: config.BUS_CONCURRENCY,
    log,
  });
  const sweeper = startExpirySweeper(deps, config.SWEEP_INTERVAL_MS);
  return {
    async stop() {
      await sweeper.stop();
      await served.stop();
      await relay?.stop();
    },
  };
}
