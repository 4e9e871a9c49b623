// Action creation through the gateway: the all-in-one process (in-process bus) against separate service
// processes over NATS, on the same Postgres; each at full speed, then at half that rate (latency below saturation),
// and both as a ratio of the bare reference server measured in the same run.
import { apiClient } from '../harness/http.js';
import { startStack, type StackMode } from '../harness/stack.js';
import { cpuProbe, printCpuPerRequest, processGroups } from './cpu.js';
import { databaseProbe, printDatabasePerRequest } from './db-stats.js';
import {
  load,
  measured,
  out,
  ratio,
  settings,
  table,
  withDatabase,
  type BenchCase,
  type Figures,
  type Infra,
} from './load.js';
import { pacedLoad } from './paced.js';

/** CPU figures of the runs, printed after the table. */
const cpuReports: Array<() => void> = [];

export const PURCHASE = {
  action_type: 'purchase',
  title: 'Bench purchase',
  amount: 9.99,
  metadata: { order: 'bench' },
};

async function creation(infra: Infra, mode: StackMode, label: string): Promise<[Figures, Figures]> {
  return withDatabase(infra, async (databaseUrl) => {
    const stack = await startStack({
      mode,
      databaseUrl,
      natsUrl: infra.natsUrl,
      name: 'bench',
      env: { LOG_REQUESTS: 'false', DB_POOL_SIZE: '10', RATE_LIMITS: 'false' },
    }); // one key at full speed would pass any limit; the admission case measures the limit
    try {
      const api = apiClient(stack.baseUrl);
      const account = await api.newAccount();
      // A busy account is a paying one: on the unlimited plan creations do not queue on the quota counter.
      await api.device(account.device_id).post('/account/plan', { plan: 'unlimited' });
      const headers = { 'x-api-key': account.api_key };
      // Postgres CPU of this database's backends only: on a shared machine the server's other backends are others' work.
      const cpu = cpuProbe(processGroups(stack, databaseUrl));
      const db = databaseProbe(databaseUrl);
      let used = new Map<string, number>();
      const start = () => {
        cpu.start();
        db.start();
      };
      const stop = () => {
        used = cpu.stop();
      };
      const full = await load(label, `${stack.baseUrl}/actions`, headers, PURCHASE, { probe: { start, stop } });
      const writes = await db.perRequest(full.total ?? 0);
      cpuReports.push(() => {
        printCpuPerRequest(`${label.slice(0, 3)} at full speed`, used, full.total ?? 0);
        printDatabasePerRequest(`${label.slice(0, 3)} at full speed`, writes);
      });
      // Evenly paced (open loop), latency from each request's due time: what an agent sees below saturation.
      const half = await pacedLoad(
        `${label.slice(0, 3)}  at half that rate, paced (${Math.round(full.rps / 2)}/s)`,
        `${stack.baseUrl}/actions`,
        headers,
        PURCHASE,
        { rate: full.rps / 2, seconds: settings.seconds, connections: settings.connections },
      );
      return [full, half];
    } finally {
      await stack.stop();
    }
  });
}

export const actionCreation: BenchCase = {
  name: 'create',
  description: 'POST /actions: all-in-one vs one process per service over NATS, against the reference',
  async run(infra) {
    const rows = [...(await creation(infra, 'all-in-one', '(a) all-in-one (in-process bus)'))];
    if (infra.natsUrl) rows.push(...(await creation(infra, 'processes', '(b) one process per service over NATS')));
    const reference = measured.get('reference');
    const referenceHalf = measured.get('reference-half');
    table(reference && referenceHalf ? [reference, referenceHalf, ...rows] : rows);
    if (reference) {
      ratio('(a) all-in-one / reference', reference, rows[0]!);
      if (rows[2]) ratio('(b) processes / reference', reference, rows[2]);
    }
    if (rows[2]) ratio('(b)/(a)', rows[0]!, rows[2]);
    else out('(b) skipped: no NATS server reachable');
    for (const report of cpuReports.splice(0)) report();
  },
};
