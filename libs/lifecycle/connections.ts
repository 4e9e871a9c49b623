import { type Bus, connectNatsBus, createInProcessBus } from '@agent-auth/bus';
import { type Config, requireSetting } from '@agent-auth/config';
import { connectDatabase, type EmbeddedPostgres, type Sql, startEmbeddedPostgres } from '@agent-auth/db';
import type { Logger } from '@agent-auth/logging';
import { StartupError } from './startup-errors.js';

/**
 * What a process needs of Postgres: why (named when DATABASE_URL is missing), false for nothing, or `embeddedIn`:
 * DATABASE_URL when it is set, else an embedded Postgres kept in that folder (the all-in-one process).
 */
export type DatabaseNeed =
  | string
  | false
  | ((config: Config) => string | false)
  | { embeddedIn(config: Config): string };

/**
 * What a process needs of NATS: why (named when NATS_URL is missing), or `inProcessWithoutNats`: NATS when NATS_URL is
 * set, else a bus inside the process (the all-in-one process).
 */
export type BusNeed = string | { inProcessWithoutNats: true };

/** A process's Postgres: its connection pool (if it has one), and the embedded server it started (if it did). */
export interface DatabaseConnection {
  sql: Sql | undefined;
  embedded: EmbeddedPostgres | undefined;
}

/** Connects the database a process needs: DATABASE_URL, an embedded Postgres, or none. */
export async function connectNeededDatabase(
  need: DatabaseNeed,
  { config, log, name }: { config: Config; log: Logger; name: string },
): Promise<DatabaseConnection> {
  if (typeof need === 'object' && !config.DATABASE_URL) {
    const dir = need.embeddedIn(config);
    log.info({ dir }, 'starting embedded Postgres');
    const embedded = await startEmbeddedPostgres(dir);
    // The embedded server takes one connection at a time.
    return { sql: connectDatabase(embedded.url, { max: 1, applicationName: name }), embedded };
  }
  const why = typeof need === 'function' ? need(config) : need;
  if (why === false) return { sql: undefined, embedded: undefined };
  const url = typeof why === 'string' ? requireSetting(config, 'DATABASE_URL', why) : config.DATABASE_URL!;
  return { sql: connectDatabase(url, { max: config.DB_POOL_SIZE, applicationName: name }), embedded: undefined };
}

/** Connects the bus a process needs: NATS_URL, or a bus inside the process when it may run without NATS. */
export async function connectNeededBus(
  need: BusNeed,
  { config, log, name }: { config: Config; log: Logger; name: string },
): Promise<Bus> {
  const options = { prefix: config.BUS_PREFIX, timeoutMs: config.BUS_TIMEOUT_MS };
  if (typeof need === 'object' && !config.NATS_URL) return createInProcessBus(options);
  const url = typeof need === 'string' ? requireSetting(config, 'NATS_URL', need) : config.NATS_URL!;
  const stream = { streamReplicas: config.NATS_STREAM_REPLICAS, streamMaxAgeHours: config.NATS_STREAM_MAX_AGE_HOURS };
  const resilience = {
    heartbeatMs: config.BUS_HEARTBEAT_MS,
    firstWordMs: config.BUS_FIRST_WORD_MS,
    silenceMs: config.BUS_SILENCE_MS,
    attempts: config.BUS_ATTEMPTS,
    noRespondersWaitMs: config.BUS_NO_RESPONDERS_WAIT_MS,
    disconnectedWaitMs: config.BUS_DISCONNECTED_WAIT_MS,
    reconnectWaitMs: config.NATS_RECONNECT_WAIT_MS,
    reconnectJitterMs: config.NATS_RECONNECT_JITTER_MS,
  };
  return connectNatsBus({ ...options, url, ...stream, name, log, resilience }).catch((err: unknown) => {
    throw new StartupError(`NATS_URL: no NATS server answers (${(err as Error).message})`);
  });
}
