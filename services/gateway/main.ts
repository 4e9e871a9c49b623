import { connectNatsBus } from '@agent-auth/bus';
import { loadConfig, requireSetting } from '@agent-auth/config';
import { connectDatabase } from '@agent-auth/db';
import { untilSignal } from '@agent-auth/lifecycle';
import { createLogger } from '@agent-auth/logging';
import { startGateway } from './index.js';

const config = loadConfig();
const log = createLogger({ service: 'gateway', level: config.LOG_LEVEL });
// The rate limits every gateway replica shares live in Postgres; without rate limiting the gateway needs no database.
const sql = config.RATE_LIMITS
  ? connectDatabase(requireSetting(config, 'DATABASE_URL', 'the gateway keeps the shared rate limits in Postgres (or set RATE_LIMITS=false)'), { max: config.DB_POOL_SIZE, applicationName: 'gateway' })
  : undefined;
const bus = await connectNatsBus({ url: requireSetting(config, 'NATS_URL', 'the gateway reaches the services over NATS'), prefix: config.BUS_PREFIX, timeoutMs: config.BUS_TIMEOUT_MS, name: 'gateway', log });
try {
  const gateway = await startGateway({ bus, config, log, sql });
  await untilSignal(log);
  await gateway.stop();
} finally {
  await bus.close();
  await sql?.end({ timeout: 5 });
  log.info('gateway stopped');
}
