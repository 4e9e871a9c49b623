import { actionsSettingKeys, type Config, parseSetting, pickSettings, requireSetting } from '@agent-auth/config';
import { parseKeyring } from '@agent-auth/encryption';
import { databaseOf, runServiceProcess } from '@agent-auth/lifecycle';
import { defaultReceiptIssuer, parseReceiptKeys, policyOverBus, startActionsService } from './index.js';

const DATABASE_WHY = 'the actions service stores requests in Postgres';

const keyringOf = (config: Config) =>
  parseSetting(
    'ACTIONS_KEYS',
    requireSetting(config, 'ACTIONS_KEYS', 'the key that encrypts action metadata'),
    parseKeyring,
  );

await runServiceProcess({
  name: 'actions',
  title: 'actions service',
  database: DATABASE_WHY,
  bus: 'services talk over NATS',
  preflight: keyringOf,
  start: async (parts) =>
    startActionsService({
      bus: parts.bus,
      sql: databaseOf(parts),
      keyring: keyringOf(parts.config),
      settings: pickSettings(parts.config, actionsSettingKeys),
      log: parts.log,
      policy: policyOverBus(parts.bus),
      receiptKeys: await parseReceiptKeys(
        requireSetting(parts.config, 'RECEIPT_KEYS', 'the keys that sign receipts and audit heads'),
      ),
      receiptIssuer: () => defaultReceiptIssuer(parts.config),
      sealerThread: {
        databaseUrl: requireSetting(parts.config, 'DATABASE_URL', DATABASE_WHY),
        service: 'actions',
        logLevel: parts.config.LOG_LEVEL,
      },
    }),
});
