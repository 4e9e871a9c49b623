// The yardstick of the create case: a bare fastify + zod + one-insert server (reference-server.ts) in its own
// process on the same Postgres, loaded like the real service. Its figures stay in `measured` for the ratios.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { PURCHASE } from './action-creation.js';
import { load, measured, settings, table, withDatabase, type BenchCase } from './load.js';
import { pacedLoad } from './paced.js';
import { cpuProbe, groupsOf, printCpuPerRequest } from './cpu.js';
// The yardstick runs with the services' own Node.js flags, so the ratios compare the code, not the tuning.
import { SERVICE_NODE_FLAGS } from '../harness/stack.js';

const ROOT = resolve(import.meta.dirname, '../..');

async function startReference(databaseUrl: string): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
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

/** The reference's CPU per request (printed after its table). */
let referenceCpu = () => {};

export const reference: BenchCase = {
  name: 'reference',
  description: 'POST /actions on a bare fastify + zod + one-insert server (the yardstick of the create case)',
  async run(infra) {
    const figures = await withDatabase(infra, async (databaseUrl) => {
      const server = await startReference(databaseUrl);
      try {
        const cpu = cpuProbe(groupsOf({ reference: [server.pid] }, databaseUrl));
        let used = new Map<string, number>();
        const probe = { start: () => cpu.start(), stop: () => (used = cpu.stop()) };
        const full = await load('(r) reference: fastify + zod + one insert', `${server.url}/actions`, {}, PURCHASE, {
          probe,
        });
        referenceCpu = () => printCpuPerRequest('(r) reference at full speed', used, full.total ?? 0);
        // The same pacing as the create case's half-rate runs: what latency below saturation is on this machine.
        const half = await pacedLoad(
          `(r)  at half that rate, paced (${Math.round(full.rps / 2)}/s)`,
          `${server.url}/actions`,
          {},
          PURCHASE,
          { rate: full.rps / 2, seconds: settings.seconds, connections: settings.connections },
        );
        return [full, half] as const;
      } finally {
        await server.stop();
      }
    });
    measured.set('reference', figures[0]);
    measured.set('reference-half', figures[1]);
    table([...figures]);
    referenceCpu();
  },
};
