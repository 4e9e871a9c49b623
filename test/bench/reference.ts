// The yardsticks of the create case, each in its own process: a bare fastify + zod + one-insert server
// (reference-server.ts) on the same Postgres, loaded beside the real service, and a server answering from memory
// (floor-server.ts), the latency floor of the machine (action-creation.ts); and the vault case's upstream API
// (upstream-server.ts, vault-execution.ts).
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
// The yardstick runs with the services' own Node.js flags, so the ratios compare the code, not the tuning.
import { SERVICE_NODE_FLAGS } from '../harness/stack.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** A yardstick server in its own process: its URL and pid. */
export interface BenchServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts the reference server on a database. */
export function startReference(databaseUrl: string): Promise<BenchServer> {
  return startBenchServer('test/bench/reference-server.ts', { DATABASE_URL: databaseUrl, DB_POOL_SIZE: '10' });
}

/** Starts the floor server (no database). */
export function startFloorServer(): Promise<BenchServer> {
  return startBenchServer('test/bench/floor-server.ts', {});
}

/** Starts the vault case's HTTPS upstream (upstream-server.ts) with this certificate. */
export function startUpstreamServer(cert: { key: string; cert: string }): Promise<BenchServer> {
  return startBenchServer('test/bench/upstream-server.ts', { UPSTREAM_KEY: cert.key, UPSTREAM_CERT: cert.cert });
}

async function startBenchServer(script: string, env: Record<string, string>): Promise<BenchServer> {
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, '--import', 'tsx', script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolveUrl, reject) => {
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const match = /"url":"([^"]+)"/.exec(buffered);
      if (match) resolveUrl(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return {
    url,
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
