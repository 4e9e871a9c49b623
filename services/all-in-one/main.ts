import { join } from 'node:path';
import { parseReceiptKeys, policyOverBus, startActionsService } from '@agent-auth/actions';
import {
  actionsSettingKeys,
  type Config,
  gatewaySettingKeys,
  identitySettingKeys,
  notifierSettingKeys,
  parseSetting,
  pickSettings,
  policySettingKeys,
  vaultSettingKeys,
} from '@agent-auth/config';
import { parseKeyring } from '@agent-auth/encryption';
import { startGateway } from '@agent-auth/gateway';
import { startIdentityService } from '@agent-auth/identity';
import { databaseOf, type ProcessParts, type Running, runServiceProcess } from '@agent-auth/lifecycle';
import { startNotifierService } from '@agent-auth/notifier';
import { startPolicyService } from '@agent-auth/policy';
import { startVaultExecutor } from '@agent-auth/vault-executor';
import { announceDemoAccount, ensureDataDir, localKeyringSpec } from './local-setup.js';

// The whole service in one process: every service on one bus (NATS if NATS_URL is set, else in-process), on
// DATABASE_URL or else an embedded Postgres kept in DATA_DIR. The keys it needs and is not given are generated into
// DATA_DIR on first start.

const keyringsOf = (config: Config) => {
  const dataDir = ensureDataDir(config.DATA_DIR);
  return {
    actions: parseSetting('ACTIONS_KEYS', config.ACTIONS_KEYS ?? localKeyringSpec(dataDir), parseKeyring),
    // One process holds both keyrings here; split deployments give VAULT_KEYS to the vault executor only.
    vault: parseSetting('VAULT_KEYS', config.VAULT_KEYS ?? localKeyringSpec(dataDir, 'VAULT_KEYS'), parseKeyring),
  };
};

/** Starts every service on the process's bus and database, the gateway last; stops them in the reverse order. */
async function startAllInOne(parts: ProcessParts): Promise<Running> {
  const { config, log, bus } = parts;
  const sql = databaseOf(parts);
  const dataDir = ensureDataDir(config.DATA_DIR);
  const keyrings = keyringsOf(config);
  // Signs receipts and audit chain heads; generated into the data folder unless RECEIPT_KEYS is set.
  const receiptKeys = await parseReceiptKeys(config.RECEIPT_KEYS ?? localKeyringSpec(dataDir, 'RECEIPT_KEYS'));
  const policy = await startPolicyService({
    bus,
    sql,
    settings: pickSettings(config, policySettingKeys),
    log: log.child({ component: 'policy' }),
  });
  // The notifier joins the event stream before the actions relay starts publishing to it.
  const notifier = await startNotifierService({
    bus,
    sql,
    settings: pickSettings(config, notifierSettingKeys),
    log: log.child({ component: 'notifier' }),
  });
  // Receipts name the address this process ends up serving on (known once the gateway listens) unless configured.
  let servedAt = '';
  const actions = await startActionsService({
    bus,
    sql,
    keyring: keyrings.actions,
    settings: pickSettings(config, actionsSettingKeys),
    log: log.child({ component: 'actions' }),
    policy: policyOverBus(bus),
    receiptKeys,
    receiptIssuer: () => config.RECEIPT_ISSUER ?? config.PUBLIC_BASE_URL ?? servedAt,
    // The embedded Postgres serves one session: there the sealer shares the process's thread and connection.
    ...(config.DATABASE_URL && {
      sealerThread: { databaseUrl: config.DATABASE_URL, service: 'all-in-one', logLevel: config.LOG_LEVEL },
    }),
  });
  const identity = await startIdentityService({
    bus,
    sql,
    settings: pickSettings(config, identitySettingKeys),
    log: log.child({ component: 'identity' }),
  });
  const vault = await startVaultExecutor({
    bus,
    sql,
    keyring: keyrings.vault,
    settings: pickSettings(config, vaultSettingKeys),
    log: log.child({ component: 'vault-executor' }),
  });
  const gateway = await startGateway({
    bus,
    config: pickSettings(config, gatewaySettingKeys),
    log: log.child({ component: 'gateway' }),
    sql,
  });
  servedAt = gateway.baseUrl;
  if (config.DEMO_ACCOUNT) await announceDemoAccount(bus, dataDir, gateway.baseUrl);
  return {
    async stop() {
      for (const service of [gateway, vault, identity, actions, notifier, policy]) await service.stop();
    },
  };
}

await runServiceProcess({
  name: 'all-in-one',
  database: { embeddedIn: (config) => join(ensureDataDir(config.DATA_DIR), 'pg') },
  bus: { inProcessWithoutNats: true },
  // The gateway serves GET /metrics on its own port, with every service's metrics in the one registry.
  metricsServer: false,
  preflight: keyringsOf,
  start: startAllInOne,
});
