import { connectNatsBus } from '@agent-auth/bus';
import { loadConfig, requireSetting } from '@agent-auth/config';
import { connectDatabase } from '@agent-auth/db';
import { untilSignal } from '@agent-auth/lifecycle';
import { createLogger } from '@agent-auth/logging';
import { startNotifierService } from './index.js';

const config = loadConfig();
const log = createLogger({ service: 'notifier', level: config.LOG_LEVEL });
const sql = connectDatabase(requireSetting(config, 'DATABASE_URL', 'the notifier keeps webhook jobs in Postgres'), { max: config.DB_POOL_SIZE, applicationName: 'notifier' });
const bus = await connectNatsBus({ url: requireSetting(config, 'NATS_URL', 'the notifier consumes events from NATS JetStream'), prefix: config.BUS_PREFIX, timeoutMs: config.BUS_TIMEOUT_MS, name: 'notifier', log });
try {
  const service = await startNotifierService({ bus, sql, config, log });
  log.info('notifier service ready');
  await untilSignal(log);
  await service.stop();
} finally {
  await bus.close();
  await sql.end({ timeout: 5 });
  log.info('notifier service stopped');
}
