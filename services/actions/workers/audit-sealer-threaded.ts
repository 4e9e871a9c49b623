import { Worker } from 'node:worker_threads';
import type { Logger } from '@agent-auth/logging';
import { observeSealingLags } from './audit-sealer.js';

/** What the sealer thread is started with. */
export interface SealerThreadData {
  databaseUrl: string;
  intervalMs: number;
  service: string;
  logLevel: string;
}

/** What the sealer thread tells the process: each round's sealing lags (seconds). */
export type SealerThreadMessage = { type: 'sealed'; lags: number[] };

/** How long a sealer thread that died waits before it is started again. */
const RESTART_AFTER_MS = 1000;

/**
 * Runs the audit sealer (audit-sealer.ts) on a worker thread of its own, with its own database connection. Sealing
 * decodes, hashes and encodes every event on the thread that runs it: on the request thread, with every event
 * sealed as it comes, it cost the all-in-one process a quarter of its creates at full speed.
 * A thread that dies is logged and started again; the process's sealing-lag histogram is fed from it.
 */
export function startAuditSealerThread(input: { data: SealerThreadData; log: Logger }): { stop(): Promise<void> } {
  const { data, log } = input;
  const observe = observeSealingLags();
  let stopping = false;
  let worker: Worker | undefined;
  let restart: NodeJS.Timeout | undefined;
  const start = () => {
    const thread = new Worker(new URL('./audit-sealer-thread.js', import.meta.url), { workerData: data });
    thread.on('message', (message: SealerThreadMessage) => {
      if (message.type === 'sealed') observe(message.lags);
    });
    thread.on('error', (err) => log.error({ err }, 'audit sealer thread failed'));
    thread.on('exit', (code) => {
      if (stopping) return;
      log.error({ code }, `audit sealer thread exited; starting it again in ${RESTART_AFTER_MS} ms`);
      restart = setTimeout(start, RESTART_AFTER_MS);
      restart.unref();
    });
    thread.unref();
    worker = thread;
  };
  start();
  return {
    async stop() {
      stopping = true;
      clearTimeout(restart);
      const thread = worker;
      if (!thread) return;
      const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
      thread.postMessage('stop');
      // A round in progress finishes first; a thread that does not end within 10 s is ended.
      const timer = setTimeout(() => void thread.terminate(), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
