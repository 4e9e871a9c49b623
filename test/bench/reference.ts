// The yardstick of the create case: a bare fastify + zod + one-insert server (reference-server.ts) in its own
// process on the same Postgres, loaded beside the real service (action-creation.ts).
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
// The yardstick runs with the services' own Node.js flags, so the ratios compare the code, not the tuning.
import { SERVICE_NODE_FLAGS } from '../harness/stack.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** Starts the reference server on a database; answers its URL and pid. */
export async function startReference(
  databaseUrl: string,
): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, '--import', 'tsx', 'test/bench/reference-server.ts'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, DB_POOL_SIZE: '10' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolveUrl, reject) => {
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const match = /"url":"([^"]+)"/.exec(buffered);
      if (match) resolveUrl(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`reference server exited with ${code}`)));
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
