import { pickSettings, policySettingKeys } from '@agent-auth/config';
import { databaseOf, runServiceProcess } from '@agent-auth/lifecycle';
import { startPolicyService } from './index.js';

await runServiceProcess({
  name: 'policy',
  title: 'policy service',
  database: 'the policy service stores rules, limits and spend in Postgres',
  bus: 'services talk over NATS',
  start: (parts) =>
    startPolicyService({
      bus: parts.bus,
      sql: databaseOf(parts),
      settings: pickSettings(parts.config, policySettingKeys),
      log: parts.log,
    }),
});
