// Action creation through the gateway: the all-in-one process (in-process bus) against separate service
// processes over NATS, on the same Postgres.
import { apiClient } from '../harness/http.js';
import { startStack, type StackMode } from '../harness/stack.js';
import { load, out, ratio, table, withDatabase, type BenchCase, type Figures, type Infra } from './load.js';

export const PURCHASE = { action_type: 'purchase', title: 'Bench purchase', amount: 9.99, metadata: { order: 'bench' } };

async function creation(infra: Infra, mode: StackMode, label: string): Promise<Figures> {
  return withDatabase(infra, async (databaseUrl) => {
    const stack = await startStack({ mode, databaseUrl, natsUrl: infra.natsUrl, name: 'bench', env: { LOG_REQUESTS: 'false', DB_POOL_SIZE: '10', RATE_LIMITS: 'false' } }); // one key at full speed would pass any limit; the admission case measures the limit
    try {
      const api = apiClient(stack.baseUrl);
      const account = await api.newAccount();
      // A busy account is a paying one: on the unlimited plan creations do not queue on the quota counter.
      await api.device(account.device_id).post('/account/plan', { plan: 'unlimited' });
      return await load(label, `${stack.baseUrl}/actions`, { 'x-api-key': account.api_key }, PURCHASE);
    } finally {
      await stack.stop();
    }
  });
}

export const actionCreation: BenchCase = {
  name: 'create',
  description: 'POST /actions: all-in-one vs one process per service over NATS',
  async run(infra) {
    const rows = [await creation(infra, 'all-in-one', '(a) all-in-one (in-process bus)')];
    if (infra.natsUrl) rows.push(await creation(infra, 'processes', '(b) one process per service over NATS'));
    table(rows);
    if (rows[1]) ratio('(b)/(a)', rows[0]!, rows[1]);
    else out('(b) skipped: no NATS server reachable');
  },
};
