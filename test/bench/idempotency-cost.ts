// The cost of Idempotency-Key: POST /actions on the all-in-one process with a new key on every request
// (the agent's client library sends one on every create) against none, on the same Postgres. A keyed create claims
// its key, stores the request and keeps the encrypted answer; an unkeyed one only stores the request. The two
// alternate over BENCH_IDEMPOTENCY_ROUNDS rounds, each on a fresh database, so drift on a shared machine hits both;
// the median of the per-round throughput ratios (keyed / none) is the figure to read on a quiet machine. On a shared
// one, read the CPU time per request of the all-in-one process and of the database's backends (test/bench/cpu.ts):
// the keyed/none ratio of those totals does not depend on how busy the machine is.
import { randomUUID } from 'node:crypto';
import { apiClient } from '../harness/http.js';
import { startStack } from '../harness/stack.js';
import { PURCHASE } from './action-creation.js';
import { cpuProbe, printCpuPerRequest, processGroups } from './cpu.js';
import { load, median, out, table, withDatabase, type BenchCase, type Figures, type Infra } from './load.js';

const ROUNDS = Number(process.env.BENCH_IDEMPOTENCY_ROUNDS ?? 3);

interface Run {
  figures: Figures;
  /** CPU milliseconds per request, all processes of the stack and the database's backends together. */
  cpuPerRequest: number;
  cpu: Map<string, number>;
}

async function creation(infra: Infra, keyed: boolean, label: string): Promise<Run> {
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
      const { 'nats-server': _nats, ...groups } = Object.fromEntries(processGroups(stack, databaseUrl));
      const probe = cpuProbe(new Map(Object.entries(groups)));
      let cpu = new Map<string, number>();
      const figures = await load(label, `${stack.baseUrl}/actions`, { 'x-api-key': account.api_key }, PURCHASE, {
        eachRequest: keyed ? () => ({ 'idempotency-key': randomUUID() }) : undefined,
        probe: { start: probe.start, stop: () => (cpu = probe.stop()) },
      });
      const total = [...cpu.values()].reduce((a, b) => a + b, 0);
      return { figures, cpu, cpuPerRequest: figures.total ? total / figures.total : Number.NaN };
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
    const cpuRatios: number[] = [];
    const cpuLines: Array<() => void> = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate which goes first, so warming the machine favours neither.
      const order = round % 2 === 1 ? [false, true] : [true, false];
      const figures = new Map<boolean, Run>();
      for (const keyed of order) {
        figures.set(
          keyed,
          await creation(infra, keyed, `round ${round}: ${keyed ? 'a key on every create' : 'no key'}`),
        );
      }
      const none = figures.get(false)!;
      const keyed = figures.get(true)!;
      rows.push(none.figures, keyed.figures);
      ratios.push(keyed.figures.rps / none.figures.rps);
      cpuRatios.push(keyed.cpuPerRequest / none.cpuPerRequest);
      for (const run of [none, keyed])
        cpuLines.push(() => printCpuPerRequest(run.figures.name, run.cpu, run.figures.total ?? 0));
    }
    table(rows);
    for (const line of cpuLines) line();
    out(
      `keyed/none throughput per round: ${ratios.map((r) => r.toFixed(3)).join(', ')}; median ${median(ratios).toFixed(3)} ` +
        '(read on a quiet machine)',
    );
    out(
      `keyed/none CPU per request per round: ${cpuRatios.map((r) => r.toFixed(3)).join(', ')}; median ${median(cpuRatios).toFixed(3)} ` +
        '(less sensitive to other work on the machine than throughput; needs runs long enough to dwarf warm-up)',
    );
  },
};
