import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as connectTcp } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { freePort } from './free-port.js';

/** True when a nats-server binary is on the PATH. */
export function natsServerAvailable(): boolean {
  return spawnSync('nats-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

async function untilListening(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connectTcp(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nats-server did not listen on ${port}`);
}

/** A private NATS server with JetStream on file storage, which a test may stop and start again (same port and data). */
export async function startPrivateNats(): Promise<{ url: string; stop(): Promise<void>; start(): Promise<void> }> {
  const port = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), 'aa-nats-'));
  let child: ChildProcess | null = null;
  const start = async () => {
    child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: 'ignore' });
    await untilListening(port);
  };
  const stop = async () => {
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child!.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  await start();
  return { url: `nats://127.0.0.1:${port}`, start, stop };
}

/** One server of a private NATS cluster. */
export interface ClusterNode {
  /** Its server name (what JetStream names a stream's leader by). */
  name: string;
  url: string;
  /** Kills it at once (SIGKILL: no goodbye to the cluster or its clients). */
  kill(): Promise<void>;
  /** Starts it again, on the same ports and JetStream folder. */
  start(): Promise<void>;
  running(): boolean;
}

/** The configuration file of one node: JetStream on file storage, routes to every node (its own is ignored). */
function clusterNodeConfig(
  node: { name: string; port: number; routePort: number; storeDir: string },
  routes: number[],
) {
  return [
    `server_name: ${node.name}`,
    `listen: 127.0.0.1:${node.port}`,
    `jetstream { store_dir: "${node.storeDir}", max_memory_store: 64MB, max_file_store: 1GB }`,
    'cluster {',
    '  name: aa-test',
    `  listen: 127.0.0.1:${node.routePort}`,
    `  routes: [${routes.map((p) => `nats-route://127.0.0.1:${p}`).join(', ')}]`,
    '}',
  ].join('\n');
}

/**
 * A private cluster of `size` NATS servers with JetStream on loopback, each of which a test may kill -9 and start
 * again. Resolves when every node serves JetStream (a meta leader is elected).
 */
export async function startNatsCluster(
  size = 3,
): Promise<{ nodes: ClusterNode[]; urls: string; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'aa-nats-cluster-'));
  const specs = [];
  for (let i = 1; i <= size; i++) {
    specs.push({ name: `n${i}`, port: await freePort(), routePort: await freePort(), storeDir: join(dir, `n${i}`) });
  }
  const nodes = specs.map((spec): ClusterNode => {
    const configFile = join(dir, `${spec.name}.conf`);
    writeFileSync(
      configFile,
      clusterNodeConfig(
        spec,
        specs.map((s) => s.routePort),
      ),
    );
    let child: ChildProcess | null = null;
    const running = () => child !== null && child.exitCode === null && child.signalCode === null;
    return {
      name: spec.name,
      url: `nats://127.0.0.1:${spec.port}`,
      running,
      async start() {
        child = spawn('nats-server', ['-c', configFile], { stdio: 'ignore' });
        await untilListening(spec.port);
      },
      async kill() {
        if (!running()) return;
        const exited = new Promise((r) => child!.once('exit', r));
        child!.kill('SIGKILL');
        await exited;
      },
    };
  });
  await Promise.all(nodes.map((n) => n.start()));
  await untilJetStreamReady(nodes.map((n) => n.url));
  return {
    nodes,
    urls: nodes.map((n) => n.url).join(','),
    async stop() {
      await Promise.all(nodes.map((n) => n.kill()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until the cluster answers a JetStream account request (its meta leader is elected). */
async function untilJetStreamReady(urls: string[]): Promise<void> {
  const nc = await connect({ servers: urls });
  try {
    for (let i = 0; i < 150; i++) {
      const ok = await jetstreamManager(nc)
        .then((jsm) => jsm.getAccountInfo())
        .then(
          () => true,
          () => false,
        );
      if (ok) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error('the NATS cluster elected no JetStream leader in 30 s');
  } finally {
    await nc.close();
  }
}
