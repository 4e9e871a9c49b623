// The cost of Idempotency-Key (DESIGN 5.4): POST /actions on the all-in-one process with a new key on every request
// (the agent's client library sends one on every create) against none, on the same Postgres. A keyed create claims
// its key, stores the request and keeps the encrypted answer; an unkeyed one only stores the request. The two
// alternate over BENCH_IDEMPOTENCY_ROUNDS rounds, each on a fresh database, so drift on a shared machine hits both;
// the median of the per-round throughput ratios (keyed / none) is the figure to read.
import { randomUUID } from 'node:crypto';
import { apiClient } from '../harness/http.js';
import { startStack } from '../harness/stack.js';
import { PURCHASE } from './action-creation.js';
import { load, out, table, withDatabase, type BenchCase, type Figures, type Infra } from './load.js';

const ROUNDS = Number(process.env.BENCH_IDEMPOTENCY_ROUNDS ?? 3);

async function creation(infra: Infra, keyed: boolean, label: string): Promise<Figures> {
  return withDatabase(infra, async (databaseUrl) => {
    const stack = await startStack({
      mode: 'all-in-one',
      databaseUrl,
      natsUrl: infra.natsUrl,
      name: 'bench-idempotency',
      env: { LOG_REQUESTS: 'false', DB_POOL_SIZE: '10', RATE_LIMITS: 'false' },
    });
    try {
      const api = apiClient(stack.baseUrl);
      const account = await api.newAccount();
      await api.device(account.device_id).post('/account/plan', { plan: 'unlimited' });
      return await load(label, `${stack.baseUrl}/actions`, { 'x-api-key': account.api_key }, PURCHASE, {
        eachRequest: keyed ? () => ({ 'idempotency-key': randomUUID() }) : undefined,
      });
    } finally {
      await stack.stop();
    }
  });
}

export const idempotencyCost: BenchCase = {
  name: 'idempotency',
  description: `POST /actions (all-in-one) with a new Idempotency-Key on every request vs none, alternating over ${ROUNDS} rounds`,
  async run(infra) {
    const rows: Figures[] = [];
    const ratios: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate which goes first, so warming the machine favours neither.
      const order = round % 2 === 1 ? [false, true] : [true, false];
      const figures = new Map<boolean, Figures>();
      for (const keyed of order) {
        figures.set(
          keyed,
          await creation(infra, keyed, `round ${round}: ${keyed ? 'a key on every create' : 'no key'}`),
        );
      }
      rows.push(figures.get(false)!, figures.get(true)!);
      ratios.push(figures.get(true)!.rps / figures.get(false)!.rps);
    }
    table(rows);
    const sorted = [...ratios].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
    out(
      `keyed/none throughput per round: ${ratios.map((r) => r.toFixed(3)).join(', ')}; median ${median.toFixed(3)} ` +
        '(read on a quiet machine; on a shared one only the ratio within a round means anything)',
    );
  },
};
