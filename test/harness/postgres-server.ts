import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

/** The bin folder of the machine's PostgreSQL (initdb, pg_ctl), or null with the reason there is none. */
export function postgresBinaries(): { bin: string } | { missing: string } {
  const onPath = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  const candidates = [
    ...(onPath.status === 0 ? [onPath.stdout.trim()] : []),
    ...(existsSync('/usr/lib/postgresql')
      ? readdirSync('/usr/lib/postgresql')
          .sort()
          .reverse()
          .map((v) => `/usr/lib/postgresql/${v}/bin`)
      : []),
  ];
  const bin = candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
  return bin ? { bin } : { missing: 'no PostgreSQL server binaries (initdb, pg_ctl) on this machine' };
}

/** initdb refuses to run as root: as root, the cluster belongs to the `postgres` user. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/** A private PostgreSQL cluster in a temporary folder on a free port, which a test may restart or crash. */
export interface PrivatePostgres {
  url: string;
  /** Stops at once, as a crash would (pg_ctl -m immediate), and starts again on the same port and data. */
  crashAndRestart(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a private cluster (initdb + pg_ctl, trust authentication, loopback only). */
export async function startPrivatePostgres(bin: string): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'aa-pg-'));
  const data = join(dir, 'data');
  const owner = runAs();
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const port = await freePort();
  const run = (tool: string, args: string[]) => {
    const r = spawnSync(join(bin, tool), args, { cwd: dir, encoding: 'utf8', ...(owner ?? {}) });
    if (r.status !== 0) throw new Error(`${tool} ${args.join(' ')} failed: ${r.stderr || r.stdout}`);
  };
  run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const start = () => run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async crashAndRestart() {
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      start();
    },
    async stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
