import { type Config, parseSetting, pickSettings, requireSetting, vaultSettingKeys } from '@agent-auth/config';
import { parseKeyring } from '@agent-auth/encryption';
import { databaseOf, runServiceProcess } from '@agent-auth/lifecycle';
import { startVaultExecutor } from './index.js';

const keyringOf = (config: Config) =>
  parseSetting(
    'VAULT_KEYS',
    requireSetting(config, 'VAULT_KEYS', 'the vault executor encrypts and decrypts credentials with it'),
    parseKeyring,
  );

await runServiceProcess({
  name: 'vault-executor',
  title: 'vault executor',
  database: 'the vault executor stores credentials in Postgres',
  bus: 'services talk over NATS',
  preflight: keyringOf,
  start: (parts) =>
    startVaultExecutor({
      bus: parts.bus,
      sql: databaseOf(parts),
      keyring: keyringOf(parts.config),
      settings: pickSettings(parts.config, vaultSettingKeys),
      log: parts.log,
    }),
});
