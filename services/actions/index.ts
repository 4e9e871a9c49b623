import type { Bus } from '@agent-auth/bus';
import type { ActionsSettings } from '@agent-auth/config';
import { actionsEndpoints } from '@agent-auth/contracts';
import { packageDir, type Sql, vacuumAfterDeletes } from '@agent-auth/db';
import type { Keyring } from '@agent-auth/encryption';
import { serveBusService } from '@agent-auth/lifecycle';
import type { Logger } from '@agent-auth/logging';
import { noAutomaticDecisions, type PolicyDecider } from './adapters/policy.js';
import { accountHandlers } from './handlers/accounts.js';
import { actionHandlers } from './handlers/actions.js';
import { executionHandlers } from './handlers/execution.js';
import { identityHandlers } from './handlers/identities.js';
import { memberHandlers } from './handlers/members.js';
import { passkeyHandlers } from './handlers/passkeys.js';
import { webhookHandlers } from './handlers/webhooks.js';
import { createAccountStore } from './store/accounts.js';
import { createIdempotencyStore } from './store/idempotency.js';
import { createIdentityStore } from './store/identities.js';
import { createMemberStore } from './store/members.js';
import { createOutboxStore } from './store/outbox.js';
import { createPasskeyStore } from './store/passkeys.js';
import { createRequestStore } from './store/requests.js';
import { createTotpStore } from './store/totp.js';
import { createToolCallStore } from './store/tool-calls.js';
import { toolCallHandlers } from './handlers/tool-calls.js';
import { ruleReplayHandlers } from './handlers/rule-replay.js';
import { cibaHandlers } from './handlers/ciba.js';
import { createCibaStore } from './store/ciba.js';
import { createRequestHistoryStore } from './store/request-history.js';
import { createUseCases } from './use-cases/use-cases.js';
import { KEYS_VACUUM_EVERY_ROWS, startExpirySweeper } from './workers/expiry-sweeper.js';
import { OUTBOX_VACUUM_EVERY_ROWS, type OutboxRelay, startOutboxRelay } from './workers/outbox-relay.js';
import { auditHandlers } from './handlers/audit.js';
import { createAuditChainStore } from './store/audit-chain.js';
import type { ReceiptKeys } from './domain/receipt-keys.js';
import { createReceiptIssuer } from './use-cases/receipts.js';
import { startAuditSealer } from './workers/audit-sealer.js';
import { startPartitionKeeper } from './workers/partition-keeper.js';
import { startEscalationScheduler } from './workers/escalation-scheduler.js';
import { createEscalationStore } from './store/escalations.js';
import { createPartitionStore, createRequestPartitionStore } from './store/table-partitions.js';
import { createAuditCutStore } from './store/audit-cuts.js';
import { type SealerThreadData, startAuditSealerThread } from './workers/audit-sealer-threaded.js';

export { type PolicyDecider, policyOverBus } from './adapters/policy.js';
export {
  generateReceiptKeySpec,
  parseReceiptKeys,
  type ReceiptKeys,
  retiredReceiptKeySpec,
} from './domain/receipt-keys.js';
export { defaultReceiptIssuer } from './use-cases/receipts.js';

export interface ActionsServiceInput {
  bus: Bus;
  sql: Sql;
  keyring: Keyring;
  settings: ActionsSettings;
  log: Logger;
  policy?: PolicyDecider;
  /** Sign receipts and audit chain heads. */
  receiptKeys: ReceiptKeys;
  /** The receipts' `iss`, read when signing (all-in-one knows its address only once it listens). */
  receiptIssuer: () => string;
  /**
   * Seal the audit chain on a thread of its own, with one more connection to this database (not on the embedded
   * Postgres, which serves one session): the thread's start data. Without it the sealer runs on the process's thread.
   */
  sealerThread?: Omit<SealerThreadData, 'intervalMs'>;
}

/**
 * Migrates the actions schema, serves the actions endpoints on the bus, runs the expiry sweeper, the outbox relay
 * and the audit sealer.
 */
export async function startActionsService(input: ActionsServiceInput) {
  const { sql, log, settings, bus } = input;
  let relay: OutboxRelay | undefined;
  const auditChain = createAuditChainStore(sql);
  const useCases = createUseCases({
    ...input,
    policy: input.policy ?? noAutomaticDecisions,
    requests: createRequestStore(sql, (events) => relay?.committed(events)),
    identities: createIdentityStore(sql),
    members: createMemberStore(sql),
    totp: createTotpStore(sql),
    accounts: createAccountStore(sql),
    passkeys: createPasskeyStore(sql),
    auditChain,
    auditCuts: createAuditCutStore(sql),
    receipts: createReceiptIssuer(input.receiptKeys, input.receiptIssuer, settings.RECEIPTS),
    idempotency: createIdempotencyStore(sql),
    toolCalls: createToolCallStore(sql),
    requestHistory: createRequestHistoryStore(sql),
    ciba: createCibaStore(sql),
  });
  const served = await serveBusService({
    bus,
    sql,
    log,
    name: 'actions',
    description: 'Action requests, identities, approvals and expiry',
    migrations: { schema: 'actions', dir: `${packageDir(import.meta.url)}/store/migrations` },
    health: actionsEndpoints.health,
    handlers: [
      ...identityHandlers(useCases),
      ...memberHandlers(useCases),
      ...accountHandlers(useCases),
      ...actionHandlers(useCases),
      ...toolCallHandlers(useCases),
      ...passkeyHandlers(useCases),
      ...executionHandlers(useCases),
      ...webhookHandlers(useCases),
      ...auditHandlers(useCases),
      ...ruleReplayHandlers(useCases),
      ...cibaHandlers(useCases),
    ],
    concurrency: settings.BUS_CONCURRENCY,
  });
  // After the migrations: the relay starts awake and publishes whatever the outbox holds.
  relay = startOutboxRelay({
    outbox: createOutboxStore(sql),
    stream: bus.actionEvents,
    pollMs: settings.RELAY_POLL_MS,
    log: log.child({ component: 'outbox-relay' }),
    vacuum: vacuumAfterDeletes({ sql, table: 'actions.outbox', everyRows: OUTBOX_VACUUM_EVERY_ROWS, log }),
  });
  const keysVacuum = vacuumAfterDeletes({
    sql,
    table: 'actions.idempotency_keys',
    everyRows: KEYS_VACUUM_EVERY_ROWS,
    log,
  });
  const sweeper = startExpirySweeper(useCases.expiry, settings.SWEEP_INTERVAL_MS, log, keysVacuum);
  const partitionKeeper = startPartitionKeeper({
    requests: createRequestPartitionStore(sql),
    audit: [createPartitionStore(sql, 'audit_events'), createPartitionStore(sql, 'audit_chain')],
    auditRetention: useCases.auditRetention,
    intervalMs: settings.PARTITION_UPKEEP_MS,
    retentionDays: settings.RETENTION_DAYS,
    log: log.child({ component: 'partition-keeper' }),
  });
  const escalations = startEscalationScheduler({
    escalations: createEscalationStore(sql, (events) => relay?.committed(events)),
    log: log.child({ component: 'escalations' }),
  });
  const sealerLog = log.child({ component: 'audit-sealer' });
  const intervalMs = settings.AUDIT_SEAL_INTERVAL_MS;
  const sealer = !settings.RECEIPTS
    ? undefined
    : input.sealerThread
      ? startAuditSealerThread({ data: { ...input.sealerThread, intervalMs }, log: sealerLog })
      : startAuditSealer({ chain: auditChain, intervalMs, log: sealerLog });
  return {
    async stop() {
      await sealer?.stop();
      await escalations.stop();
      await partitionKeeper.stop();
      await sweeper.stop();
      await served.stop();
      await relay?.stop();
    },
  };
}
