import { join } from 'node:path';
import { parseReceiptKeys, policyOverBus, startActionsService } from '@agent-auth/actions';
import { connectNatsBus, createInProcessBus, type Bus } from '@agent-auth/bus';
import {
  actionsSettingKeys,
  gatewaySettingKeys,
  loadConfig,
  notifierSettingKeys,
  parseSetting,
  pickSettings,
  policySettingKeys,
  vaultSettingKeys,
} from '@agent-auth/config';
import { connectDatabase, startEmbeddedPostgres, type EmbeddedPostgres } from '@agent-auth/db';
import { parseKeyring } from '@agent-auth/encryption';
import { startGateway } from '@agent-auth/gateway';
import { startPolicyService } from '@agent-auth/policy';
import { startVaultExecutor } from '@agent-auth/vault-executor';
import { startNotifierService } from '@agent-auth/notifier';
import { exitOnStartupError, untilSignal } from '@agent-auth/lifecycle';
import { createLogger } from '@agent-auth/logging';
import { announceDemoAccount, ensureDataDir, localKeyringSpec } from './local-setup.js';

// The whole service in one process: every service on one bus (NATS if NATS_URL is set, else in-process),
// on DATABASE_URL or else an embedded Postgres kept in DATA_DIR.
exitOnStartupError('all-in-one');
const config = loadConfig();
const log = createLogger({ service: 'all-in-one', level: config.LOG_LEVEL });
const dataDir = ensureDataDir(config.DATA_DIR);
const keyring = parseSetting('ACTIONS_KEYS', config.ACTIONS_KEYS ?? localKeyringSpec(dataDir), parseKeyring);
// One process holds both keyrings here; split deployments give VAULT_KEYS to the vault executor only.
const vaultKeyring = parseSetting(
  'VAULT_KEYS',
  config.VAULT_KEYS ?? localKeyringSpec(dataDir, 'VAULT_KEYS'),
  parseKeyring,
);

// Signs receipts and audit chain heads; generated into the data folder unless RECEIPT_KEYS is set.
const receiptKeys = await parseReceiptKeys(config.RECEIPT_KEYS ?? localKeyringSpec(dataDir, 'RECEIPT_KEYS'));

let embedded: EmbeddedPostgres | undefined;
if (!config.DATABASE_URL) {
  log.info({ dir: join(dataDir, 'pg') }, 'starting embedded Postgres');
  embedded = await startEmbeddedPostgres(join(dataDir, 'pg'));
}
const sql = connectDatabase(config.DATABASE_URL ?? embedded!.url, {
  max: embedded ? 1 : config.DB_POOL_SIZE,
  applicationName: 'all-in-one',
});
const bus: Bus = config.NATS_URL
  ? await connectNatsBus({
      url: config.NATS_URL,
      prefix: config.BUS_PREFIX,
      timeoutMs: config.BUS_TIMEOUT_MS,
      name: 'all-in-one',
      log,
    })
  : createInProcessBus({ prefix: config.BUS_PREFIX, timeoutMs: config.BUS_TIMEOUT_MS });

try {
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
  const receiptIssuer = () => config.RECEIPT_ISSUER ?? config.PUBLIC_BASE_URL ?? servedAt;
  const actions = await startActionsService({
    bus,
    sql,
    keyring,
    settings: pickSettings(config, actionsSettingKeys),
    log: log.child({ component: 'actions' }),
    policy: policyOverBus(bus),
    receiptKeys,
    receiptIssuer,
    // The embedded Postgres serves one session: there the sealer shares the process's thread and connection.
    ...(config.DATABASE_URL && {
      sealerThread: { databaseUrl: config.DATABASE_URL, service: 'all-in-one', logLevel: config.LOG_LEVEL },
    }),
  });
  const vault = await startVaultExecutor({
    bus,
    sql,
    keyring: vaultKeyring,
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
  log.info({ bus: bus.kind, database: embedded ? 'embedded' : 'external' }, 'all-in-one ready');
  if (config.DEMO_ACCOUNT) await announceDemoAccount(bus, dataDir, gateway.baseUrl);
  await untilSignal(log);
  await gateway.stop();
  await vault.stop();
  await actions.stop();
  await notifier.stop();
  await policy.stop();
} finally {
  await bus.close();
  await sql.end({ timeout: 5 });
  await embedded?.stop();
  log.info('stopped');
}
