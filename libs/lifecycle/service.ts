import { type BoundHandler, type Bus, handle, onceByCall, type ServedService } from '@agent-auth/bus';
import { type Config, loadConfig, metricsPortOf } from '@agent-auth/config';
import type { EndpointDef } from '@agent-auth/contracts';
import { migrate, type Sql } from '@agent-auth/db';
import { createLogger, type Logger } from '@agent-auth/logging';
import { startMetricsServer } from '@agent-auth/metrics';
import { type BusNeed, connectNeededBus, connectNeededDatabase, type DatabaseNeed } from './connections.js';
import { untilSignal } from './signals.js';
import { createCallOutcomes } from './call-outcomes.js';
import { exitOnStartupError } from './startup-errors.js';

/** A running service: what its process stops (drains) on shutdown. */
export interface Running {
  stop(): Promise<void>;
}

/** What the scaffold hands a service's start function: the configuration, the logger and the connections. */
export interface ProcessParts {
  config: Config;
  log: Logger;
  bus: Bus;
  sql: Sql | undefined;
}

/** The database of a process that was started with one (the scaffold connects it when `database` says why). */
export function databaseOf(parts: ProcessParts): Sql {
  if (!parts.sql) throw new Error('this service needs a database: give its process spec a `database` reason');
  return parts.sql;
}

export interface ServiceProcess {
  /** The process's name in logs and connections (e.g. "vault-executor"). */
  name: string;
  /** How its log says it is ready and stopped ("<title> ready"); the name by default. */
  title?: string;
  /**
   * Why the process needs Postgres, named when DATABASE_URL is missing; false when it needs none; `embeddedIn`: an
   * embedded Postgres kept in that folder when DATABASE_URL is not set.
   */
  database: DatabaseNeed;
  /** Why the process needs NATS, named when NATS_URL is missing; `inProcessWithoutNats`: a bus inside the process then. */
  bus: BusNeed;
  /** Serve GET /metrics on METRICS_PORT (default); off for a process that serves it on its own HTTP port. */
  metricsServer?: boolean;
  /** Checks the settings it cannot start without (e.g. parses its keyring) before anything connects. */
  preflight?(config: Config): void;
  start(parts: ProcessParts): Promise<Running>;
}

/**
 * The one shape of every service process, the all-in-one included: read the configuration, connect to Postgres and
 * NATS, serve GET /metrics on METRICS_PORT, start the service (which migrates and serves), wait for SIGINT/SIGTERM,
 * stop it (draining what is in flight), close the connections. A setting that is missing or wrong stops it with one
 * line naming it.
 */
export async function runServiceProcess(spec: ServiceProcess): Promise<void> {
  exitOnStartupError(spec.name);
  const config = loadConfig();
  spec.preflight?.(config);
  const title = spec.title ?? spec.name;
  const log = createLogger({ service: spec.name, level: config.LOG_LEVEL });
  const where = { config, log, name: spec.name };
  const { sql, embedded } = await connectNeededDatabase(spec.database, where);
  const bus = await connectNeededBus(spec.bus, where);
  // Ready (GET /readyz on the metrics port) from the moment it serves until it starts to stop, while Postgres answers.
  let serving = false;
  const ready = async () =>
    serving &&
    (!sql ||
      (await sql`select 1`.then(
        () => true,
        () => false,
      )));
  if (spec.metricsServer ?? true)
    await startMetricsServer({ config: { ...config, METRICS_PORT: metricsPortOf(config, spec.name) }, log, ready });
  try {
    const service = await spec.start({ config, log, bus, sql });
    serving = true;
    log.info({ bus: bus.kind, database: embedded ? 'embedded' : sql ? 'external' : 'none' }, `${title} ready`);
    await untilSignal(log);
    serving = false;
    await service.stop();
  } finally {
    await bus.close();
    await sql?.end({ timeout: 5 });
    await embedded?.stop();
    log.info(`${title} stopped`);
  }
}

export interface BusService {
  bus: Bus;
  sql: Sql;
  log: Logger;
  /** The service's name on the bus (its queue group). */
  name: string;
  description: string;
  /** The service's schema and the folder of its numbered .sql migrations; omitted when already migrated. */
  migrations?: { schema: string; dir: string };
  /** The service's health endpoint: answered once the database answers. */
  health: EndpointDef;
  handlers: BoundHandler[];
  concurrency: number;
}

/**
 * Migrates a service's schema (unless done), then serves its endpoints and its health endpoint on the bus. Over NATS,
 * where a request may be sent again to another replica, the effects marked `once` keep their outcome per call in
 * the service's schema (call-outcomes.ts).
 */
export async function serveBusService(spec: BusService): Promise<ServedService> {
  if (spec.migrations) await migrate(spec.sql, { ...spec.migrations, log: spec.log });
  const health = handle(spec.health, async () => {
    await spec.sql`select 1`;
    return { ok: true };
  });
  const schema = spec.migrations?.schema;
  const outcomes =
    schema && spec.bus.kind === 'nats' && spec.handlers.some((h) => h.once)
      ? await createCallOutcomes(spec.sql, schema, spec.log)
      : undefined;
  const handlers = outcomes ? spec.handlers.map((h) => (h.once ? onceByCall(h, outcomes) : h)) : spec.handlers;
  const served = await spec.bus.serve({
    name: spec.name,
    version: '0.1.0',
    description: spec.description,
    handlers: [health, ...handlers],
    concurrency: spec.concurrency,
    log: spec.log,
  });
  return {
    async stop() {
      await served.stop();
      outcomes?.stop();
    },
  };
}
