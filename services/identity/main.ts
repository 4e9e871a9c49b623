import { identitySettingKeys, pickSettings } from '@agent-auth/config';
import { databaseOf, runServiceProcess } from '@agent-auth/lifecycle';
import { startIdentityService } from './index.js';

await runServiceProcess({
  name: 'identity',
  title: 'identity service',
  database: 'the identity service stores OAuth clients, consents and tokens in Postgres',
  bus: 'services talk over NATS',
  start: (parts) =>
    startIdentityService({
      bus: parts.bus,
      sql: databaseOf(parts),
      settings: pickSettings(parts.config, identitySettingKeys),
      log: parts.log,
    }),
});
