import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** True when a nats-server binary is on the PATH. */
export function natsServerAvailable(): boolean {
  return spawnSync('nats-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

async function untilListening(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
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
