import { connectNatsBus } from '@agent-auth/bus';
import { loadConfig, requireSetting } from '@agent-auth/config';
import { untilSignal } from '@agent-auth/lifecycle';
import { createLogger } from '@agent-auth/logging';
import { startGateway } from './index.js';

const config = loadConfig();
const log = createLogger({ service: 'gateway', level: config.LOG_LEVEL });
const bus = await connectNatsBus({ url: requireSetting(config, 'NATS_URL', 'the gateway reaches the services over NATS'), prefix: config.BUS_PREFIX, timeoutMs: config.BUS_TIMEOUT_MS, name: 'gateway', log });
try {
  const gateway = await startGateway({ bus, config, log });
  await untilSignal(log);
  await gateway.stop();
} finally {
  await bus.close();
  log.info('gateway stopped');
}
