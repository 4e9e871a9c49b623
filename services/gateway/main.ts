import { gatewaySettingKeys, pickSettings } from '@agent-auth/config';
import { runServiceProcess } from '@agent-auth/lifecycle';
import { startGateway } from './index.js';

await runServiceProcess({
  name: 'gateway',
  // The rate limits every gateway replica shares live in Postgres; without rate limiting it needs no database.
  database: (config) =>
    config.RATE_LIMITS && 'the gateway keeps the shared rate limits in Postgres (or set RATE_LIMITS=false)',
  bus: 'the gateway reaches the services over NATS',
  // The gateway serves GET /metrics on its own port, beside the API.
  metricsServer: false,
  start: ({ config, log, bus, sql }) =>
    startGateway({ bus, config: pickSettings(config, gatewaySettingKeys), log, sql }),
});
