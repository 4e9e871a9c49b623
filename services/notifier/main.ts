import { notifierSettingKeys, pickSettings } from '@agent-auth/config';
import { databaseOf, runServiceProcess } from '@agent-auth/lifecycle';
import { startNotifierService } from './index.js';

await runServiceProcess({
  name: 'notifier',
  title: 'notifier service',
  database: 'the notifier keeps webhook jobs in Postgres',
  bus: 'the notifier consumes events from NATS JetStream',
  start: (parts) =>
    startNotifierService({
      bus: parts.bus,
      sql: databaseOf(parts),
      settings: pickSettings(parts.config, notifierSettingKeys),
      log: parts.log,
    }),
});
