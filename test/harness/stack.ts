import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { actionEventStreamName } from '@agent-auth/contracts';
import { generateKeyringSpec } from '@agent-auth/encryption';

export type StackMode = 'processes' | 'all-in-one';

export interface Stack {
  mode: StackMode;
  baseUrl: string;
  /** Everything every process of the stack wrote, for assertions on logs. */
  logs(): string;
  /** The bus subject prefix of this stack. */
  prefix: string;
  /** Starts one more process of a service (e.g. a second replica, or one replacing a killed process); resolves when it is ready. */
  addProcess(service: string, env?: Record<string, string>): Promise<ChildProcess>;
  /** The processes started so far, by service ('gateway' in processes mode, 'all-in-one' in all-in-one mode). */
  processes(service: string): ChildProcess[];
  /** What one process of the stack wrote (stdout and stderr), for assertions on a single replica. */
  outputOf(child: ChildProcess): string;
  /**
   * Starts one more gateway process over NATS (same bus and database), with `env` over the stack's; resolves to its
   * base URL (see processes('gateway')).
   */
  addGateway(env?: Record<string, string>): Promise<string>;
  stop(): Promise<void>;
}

const ROOT = resolve(import.meta.dirname, '../..');

/** A RECEIPT_KEYS entry: a new P-256 signing key (base64 PKCS#8) under `kid`. */
export function receiptKeySpec(kid: string): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return `${kid}:${privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64')}`;
}
const LOG_DIR = join(ROOT, '.test-logs');

interface Spawned {
  child: ChildProcess;
  output: string[];
}

// The Node.js flags every service runs with, as `npm start` gives them (package.json "start"; the image's run-service
// the same, checked in harness.test.ts), so tests and benches run the services as they are deployed.
export const SERVICE_NODE_FLAGS: string[] = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
).scripts.start
  .split(/\s+/)
  .filter((arg) => arg.startsWith('--'));

// Extra Node.js flags for every service process started here, e.g. BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/p"
// to profile the processes of a bench case (flags like --cpu-prof are refused in NODE_OPTIONS).
const nodeArgs = () => process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];

function spawnService(
  entry: string,
  env: Record<string, string>,
  logFile: string,
  readyMsg: string,
): Promise<Spawned & { ready: Record<string, unknown> }> {
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...nodeArgs(), join(ROOT, entry)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const file = createWriteStream(logFile, { flags: 'a' });
  const output: string[] = [];
  return new Promise((resolvePromise, reject) => {
    // Generous: on a shared machine under load a process can take long to print its first line.
    const timer = setTimeout(() => reject(new Error(`${entry} not ready in 90 s:\n${output.join('')}`)), 90_000);
    let buffered = '';
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      output.push(text);
      file.write(text);
      buffered += text;
      for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        try {
          const parsed = JSON.parse(line) as Record<string, unknown>;
          if (parsed.msg === readyMsg) {
            clearTimeout(timer);
            resolvePromise({ child, output, ready: parsed });
          }
        } catch {
          /* not a log line */
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited with ${code} before it was ready:\n${output.join('')}`));
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 8000);
  await exited;
  clearTimeout(timer);
}

/** Removes the JetStream stream a stack's prefix created, so test runs leave nothing behind on the NATS server. */
async function deleteEventStream(natsUrl: string, prefix: string): Promise<void> {
  const nc = await connect({ servers: natsUrl.split(',') });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(actionEventStreamName(prefix)).catch(() => false);
  } finally {
    await nc.close();
  }
}

const SERVICES: Record<string, { entry: string; ready: string }> = {
  actions: { entry: 'services/actions/dist/main.js', ready: 'actions service ready' },
  policy: { entry: 'services/policy/dist/main.js', ready: 'policy service ready' },
  notifier: { entry: 'services/notifier/dist/main.js', ready: 'notifier service ready' },
  gateway: { entry: 'services/gateway/dist/main.js', ready: 'gateway listening' },
  'vault-executor': { entry: 'services/vault-executor/dist/main.js', ready: 'vault executor ready' },
  identity: { entry: 'services/identity/dist/main.js', ready: 'identity service ready' },
};

/**
 * Starts the whole service for a test: either each service as its own process over real NATS, or the all-in-one
 * process (in-process bus). Both on the given Postgres, with a bus subject prefix of their own.
 */
export async function startStack(options: {
  mode: StackMode;
  databaseUrl: string;
  natsUrl?: string | null;
  env?: Record<string, string>;
  name?: string;
}): Promise<Stack> {
  mkdirSync(LOG_DIR, { recursive: true });
  const logFile = join(
    LOG_DIR,
    `${options.name ?? 'stack'}-${options.mode}-${Date.now()}-${randomBytes(3).toString('hex')}.log`,
  );
  const env: Record<string, string> = {
    DATABASE_URL: options.databaseUrl,
    ACTIONS_KEYS: generateKeyringSpec('t1'),
    BUS_PREFIX: `t${randomBytes(5).toString('hex')}`,
    LOG_LEVEL: 'info',
    PORT: '0',
    METRICS_PORT: '0',
    HOST: '127.0.0.1',
    // One on the embedded Postgres of the tests' fallback, which takes one connection at a time (vitest.config.ts).
    DB_POOL_SIZE: process.env.TEST_DB_POOL_SIZE ?? '4',
    ALLOW_INSECURE_HOSTS: '127.0.0.1,localhost',
    // Generous plan quota and rate limits unless a test is about them (it passes the default values in env).
    FREE_PLAN_MONTHLY_ACTIONS: '1000000',
    RATE_LIMIT_AGENT: '10000',
    RATE_LIMIT_DEVICE: '10000',
    RATE_LIMIT_IP: '10000',
    ...options.env,
  };
  // Only the vault executor receives the vault keyring (the all-in-one process holds both).
  const vaultKeys = options.env?.VAULT_KEYS ?? generateKeyringSpec('v1');
  delete env.VAULT_KEYS;
  // Only the actions service holds the receipt keys (all-in-one generates its own into its data folder unless given).
  const receiptKeys = options.env?.RECEIPT_KEYS ?? (options.mode === 'processes' ? receiptKeySpec('r1') : undefined);
  delete env.RECEIPT_KEYS;
  const children: ChildProcess[] = [];
  const byService = new Map<string, ChildProcess[]>();
  const outputs = new Map<ChildProcess, string[]>();
  let baseUrl: string;

  const addProcess = async (service: string, extraEnv: Record<string, string> = {}) => {
    const spec = SERVICES[service];
    if (!spec) throw new Error(`unknown service ${service}`);
    // The vault executor gets the vault keyring and not the actions one (an empty setting counts as unset).
    const ownEnv =
      service === 'vault-executor'
        ? { VAULT_KEYS: vaultKeys, ACTIONS_KEYS: '' }
        : service === 'actions'
          ? { RECEIPT_KEYS: receiptKeys! }
          : {};
    const started = await spawnService(
      spec.entry,
      { ...env, ...ownEnv, NATS_URL: options.natsUrl!, ...extraEnv },
      logFile,
      spec.ready,
    );
    children.push(started.child);
    byService.set(service, [...(byService.get(service) ?? []), started.child]);
    outputs.set(started.child, started.output);
    return started.child;
  };

  const addGateway = async (extraEnv: Record<string, string> = {}) => {
    if (!options.natsUrl) throw new Error('a second gateway needs NATS');
    const started = await spawnService(
      SERVICES.gateway!.entry,
      { ...env, NATS_URL: options.natsUrl, ...extraEnv },
      logFile,
      SERVICES.gateway!.ready,
    );
    children.push(started.child);
    byService.set('gateway', [...(byService.get('gateway') ?? []), started.child]);
    outputs.set(started.child, started.output);
    return started.ready.url as string;
  };

  if (options.mode === 'processes') {
    if (!options.natsUrl) throw new Error('processes mode needs NATS');
    await addProcess('notifier');
    await addProcess('actions');
    await addProcess('policy');
    await addProcess('vault-executor');
    await addProcess('identity');
    const gateway = await spawnService(
      SERVICES.gateway!.entry,
      { ...env, NATS_URL: options.natsUrl },
      logFile,
      SERVICES.gateway!.ready,
    );
    children.push(gateway.child);
    byService.set('gateway', [gateway.child]);
    outputs.set(gateway.child, gateway.output);
    baseUrl = gateway.ready.url as string;
  } else {
    const dataDir = mkdtempSync(join(tmpdir(), 'aa-aio-'));
    const aio = await spawnService(
      'services/all-in-one/dist/main.js',
      {
        ...env,
        VAULT_KEYS: vaultKeys,
        ...(receiptKeys ? { RECEIPT_KEYS: receiptKeys } : {}),
        DATA_DIR: dataDir,
        DEMO_ACCOUNT: 'false',
      },
      logFile,
      'gateway listening',
    );
    children.push(aio.child);
    byService.set('all-in-one', [aio.child]);
    outputs.set(aio.child, aio.output);
    baseUrl = aio.ready.url as string;
  }

  return {
    mode: options.mode,
    baseUrl,
    prefix: env.BUS_PREFIX!,
    logs: () => readFileSync(logFile, 'utf8'),
    addProcess,
    processes: (service) => byService.get(service) ?? [],
    outputOf: (child) => (outputs.get(child) ?? []).join(''),
    addGateway,
    async stop() {
      await Promise.all(children.map(stopChild));
      if (options.mode === 'processes' && options.natsUrl) await deleteEventStream(options.natsUrl, env.BUS_PREFIX!);
    },
  };
}
