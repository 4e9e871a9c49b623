import { parentPort, workerData } from 'node:worker_threads';
import { connectDatabase } from '@agent-auth/db';
import { createLogger } from '@agent-auth/logging';
import { createAuditChainStore } from '../store/audit-chain.js';
import { startAuditSealer } from './audit-sealer.js';
import type { SealerThreadData, SealerThreadMessage } from './audit-sealer-threaded.js';

// The audit sealer on a thread of its own (audit-sealer-threaded.ts says why), with its own connection.
const data = workerData as SealerThreadData;
const log = createLogger({ service: data.service, level: data.logLevel }).child({ component: 'audit-sealer' });
const sql = connectDatabase(data.databaseUrl, { max: 1, applicationName: `${data.service}-audit-sealer` });
const post = (message: SealerThreadMessage) => parentPort!.postMessage(message);
const sealer = startAuditSealer({
  chain: createAuditChainStore(sql),
  intervalMs: data.intervalMs,
  log,
  sealed: (lags) => post({ type: 'sealed', lags }),
});
parentPort!.on('message', (message: 'stop') => {
  if (message !== 'stop') return;
  void sealer
    .stop()
    .then(() => sql.end({ timeout: 5 }))
    .finally(() => parentPort!.close());
});
