import { connectNatsBus } from '@agent-auth/bus';
import { loadConfig, requireSetting } from '@agent-auth/config';
import { connectDatabase } from '@agent-auth/db';
import { parseKeyring } from '@agent-auth/encryption';
import { createLogger } from '@agent-auth/logging';
import { policyOverBus, startActionsService } from './index.js';
import { untilSignal } from '@agent-auth/lifecycle';

const config = loadConfig();
const log = createLogger({ service: 'actions', level: config.LOG_LEVEL });
const keyring = parseKeyring(requireSetting(config, 'ACTIONS_KEYS', 'the key that encrypts action metadata'));
const sql = connectDatabase(requireSetting(config, 'DATABASE_URL', 'the actions service stores requests in Postgres'), { max: config.DB_POOL_SIZE, applicationName: 'actions' });
const bus = await connectNatsBus({ url: requireSetting(config, 'NATS_URL', 'services talk over NATS'), prefix: config.BUS_PREFIX, timeoutMs: config.BUS_TIMEOUT_MS, name: 'actions', log });
try {
  const service = await startActionsService({ bus, sql, keyring, config, log, policy: policyOverBus(bus) });
  log.info('actions service ready');
  await untilSignal(log);
  await service.stop();
} finally {
  await bus.close();
  await sql.end({ timeout: 5 });
  log.info('actions service stopped');
}
