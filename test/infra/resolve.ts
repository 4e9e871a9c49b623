import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { connect } from '@nats-io/transport-node';

export interface Infra {
  databaseUrl: string;
  /** Whether CREATE DATABASE gives each test file its own database (false on the embedded fallback). */
  isolatedDatabases: boolean;
  natsUrl: string | null;
  /** How each part was found, printed once so a run says what it ran against. */
  notes: string[];
  stop(): Promise<void>;
}

const LOCAL_PG = 'postgres://postgres@127.0.0.1:5432/postgres';
const LOCAL_NATS = 'nats://127.0.0.1:4222';

async function postgresAnswers(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

async function natsAnswers(url: string): Promise<boolean> {
  try {
    const nc = await connect({ servers: url, timeout: 2000, maxReconnectAttempts: 0 });
    await nc.close();
    return true;
  } catch {
    return false;
  }
}

function dockerAvailable(): boolean {
  try {
    execFileSync('docker', ['info'], { stdio: 'ignore', timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether the tests will run on the embedded Postgres (no TEST_DATABASE_URL, no local server, no Docker): it takes
 * one connection at a time, so test files then run one after another (vitest.config.ts).
 */
export async function willUseEmbeddedPostgres(): Promise<boolean> {
  return !process.env.TEST_DATABASE_URL && !(await postgresAnswers(LOCAL_PG)) && !dockerAvailable();
}

/**
 * Finds the infrastructure for the tests, in order: TEST_DATABASE_URL / TEST_NATS_URL; the local services if they
 * answer; testcontainers when Docker runs; else embedded Postgres and no NATS (those tests then report skipped).
 */
export async function resolveInfra(): Promise<Infra> {
  const notes: string[] = [];
  const stops: Array<() => Promise<void>> = [];
  const docker = dockerAvailable();

  let databaseUrl = process.env.TEST_DATABASE_URL;
  let isolatedDatabases = true;
  if (databaseUrl) notes.push('Postgres: TEST_DATABASE_URL');
  else if (await postgresAnswers(LOCAL_PG)) {
    databaseUrl = LOCAL_PG;
    notes.push(`Postgres: local server at ${LOCAL_PG}`);
  } else if (docker) {
    const { GenericContainer, Wait } = await import('testcontainers');
    const pg = await new GenericContainer('postgres:16-alpine')
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
      .withExposedPorts(5432)
      .withWaitStrategy(Wait.forLogMessage(/ready to accept connections/, 2))
      .start();
    stops.push(async () => void (await pg.stop()));
    databaseUrl = `postgres://postgres@${pg.getHost()}:${pg.getMappedPort(5432)}/postgres`;
    notes.push('Postgres: testcontainers');
  } else {
    const { startEmbeddedPostgres } = await import('@agent-auth/db');
    const embedded = await startEmbeddedPostgres(mkdtempSync(join(tmpdir(), 'aa-test-pg-')));
    stops.push(() => embedded.stop());
    databaseUrl = embedded.url;
    isolatedDatabases = false;
    notes.push('Postgres: embedded PGlite (no server found and no Docker)');
  }

  let natsUrl: string | null = process.env.TEST_NATS_URL ?? null;
  if (natsUrl) notes.push('NATS: TEST_NATS_URL');
  else if (await natsAnswers(LOCAL_NATS)) {
    natsUrl = LOCAL_NATS;
    notes.push(`NATS: local server at ${LOCAL_NATS}`);
  } else if (docker) {
    const { GenericContainer, Wait } = await import('testcontainers');
    const nats = await new GenericContainer('nats:2')
      .withCommand(['-js'])
      .withExposedPorts(4222)
      .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
      .start();
    stops.push(async () => void (await nats.stop()));
    natsUrl = `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`;
    notes.push('NATS: testcontainers');
  } else {
    notes.push('NATS: none reachable and no Docker; tests that need a real NATS are skipped');
  }

  return {
    databaseUrl,
    isolatedDatabases,
    natsUrl,
    notes,
    async stop() {
      for (const stop of stops.reverse()) await stop();
    },
  };
}
