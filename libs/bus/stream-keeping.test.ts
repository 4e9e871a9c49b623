import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { describe, expect, inject, it } from 'vitest';
import { actionEventStreamName } from '@agent-auth/contracts';
import { createLogger } from '@agent-auth/logging';
import { connectNatsBus } from './index.js';

const log = createLogger({ service: 'stream-keeping-test', level: 'silent' });
const { natsUrl } = inject('infra');
const HOUR_NS = 3600 * 1e9;

describe.skipIf(!natsUrl)(
  `the action event stream's keeping${natsUrl ? '' : ' (skipped: no NATS server reachable)'}`,
  () => {
    it('is made with the age asked for, and an existing stream is brought to a new one at the next start', async () => {
      const prefix = `sk${randomBytes(4).toString('hex')}`;
      const nc = await connect({ servers: natsUrl! });
      const jsm = await jetstreamManager(nc);
      const start = async (maxAgeHours: number) => {
        const bus = await connectNatsBus({
          url: natsUrl!,
          prefix,
          timeoutMs: 2000,
          streamMaxAgeHours: maxAgeHours,
          name: 'sk',
          log,
        });
        await bus.actionEvents.append([]);
        await bus.close();
        return (await jsm.streams.info(actionEventStreamName(prefix))).config;
      };
      try {
        const made = await start(2);
        expect(made.max_age).toBe(2 * HOUR_NS);
        expect(made.num_replicas).toBe(1);
        expect((await start(24)).max_age).toBe(24 * HOUR_NS);
      } finally {
        await jsm.streams.delete(actionEventStreamName(prefix)).catch(() => false);
        await nc.close();
      }
    });
  },
);
