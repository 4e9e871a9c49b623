import { connectNatsBus } from '@agent-auth/bus';
import { loadConfig, requireSetting } from '@agent-auth/config';
import { connectDatabase } from '@agent-auth/db';
import { untilSignal } from '@agent-auth/lifecycle';
import { createLogger } from '@agent-auth/logging';
import { startPolicyService } from './index.js';

const config = loadConfig();
const log = createLogger({ service: 'policy', level: config.LOG_LEVEL });
const sql = connectDatabase(requireSetting(config, 'DATABASE_URL', 'the policy service stores rules, limits and spend in Postgres'), { max: config.DB_POOL_SIZE, applicationName: 'policy' });
const bus = await connectNatsBus({ url: requireSetting(config, 'NATS_URL', 'services talk over NATS'), prefix: config.BUS_PREFIX, timeoutMs: config.BUS_TIMEOUT_MS, name: 'policy', log });
try {
  const service = await startPolicyService({ bus, sql, config, log });
  log.info('policy service ready');
  await untilSignal(log);
  await service.stop();
} finally {
  await bus.close();
  await sql.end({ timeout: 5 });
  log.info('policy service stopped');
}
