import { connectNatsBus } from '@agent-auth/bus';
import { loadConfig, requireSetting } from '@agent-auth/config';
import { connectDatabase } from '@agent-auth/db';
import { parseKeyring } from '@agent-auth/encryption';
import { untilSignal } from '@agent-auth/lifecycle';
import { createLogger } from '@agent-auth/logging';
import { startVaultExecutor } from './index.js';

const config = loadConfig();
const log = createLogger({ service: 'vault-executor', level: config.LOG_LEVEL });
const keyring = parseKeyring(requireSetting(config, 'VAULT_KEYS', 'the vault executor encrypts and decrypts credentials with it'));
const sql = connectDatabase(requireSetting(config, 'DATABASE_URL', 'the vault executor stores credentials in Postgres'), { max: config.DB_POOL_SIZE, applicationName: 'vault-executor' });
const bus = await connectNatsBus({ url: requireSetting(config, 'NATS_URL', 'services talk over NATS'), prefix: config.BUS_PREFIX, timeoutMs: config.BUS_TIMEOUT_MS, name: 'vault-executor', log });
try {
  const service = await startVaultExecutor({ bus, sql, keyring, config, log });
  log.info('vault executor ready');
  await untilSignal(log);
  await service.stop();
} finally {
  await bus.close();
  await sql.end({ timeout: 5 });
  log.info('vault executor stopped');
}
