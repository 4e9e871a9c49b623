// The cost of verifiable decisions (DESIGN 5.2): POST /actions on the all-in-one process with receipts and audit
// sealing on (RECEIPTS=true: every create signs a receipt, the sealer chains every audit event in the background)
// against off (RECEIPTS=false), on the same Postgres. The account has a rule that approves the bench purchase, so
// every create is resolved at creation and signs a receipt: the worst case for the request path. The two alternate
// over BENCH_RECEIPTS_ROUNDS rounds so drift on a shared machine hits both; the median of the per-round throughput
// ratios is the figure (goal: on/off at least 0.95). The sealing lag (event written → sealed into its chain) is read
// from the database after each "on" run: p50, p99 and max over every event of the run (goal: p99 under 2 s).
import postgres from 'postgres';
import { apiClient } from '../harness/http.js';
import { startStack } from '../harness/stack.js';
import { PURCHASE } from './action-creation.js';
import { cpuProbe, printCpuPerRequest, processGroups } from './cpu.js';
import { load, out, table, withDatabase, type BenchCase, type Figures, type Infra } from './load.js';

const ROUNDS = Number(process.env.BENCH_RECEIPTS_ROUNDS ?? 2);
// BENCH_RECEIPTS_SPLIT=true adds a third run per round: receipts signed on the request path, the sealer held back
// until the load ends, which splits the cost between the request path and sealing.
const SPLIT = process.env.BENCH_RECEIPTS_SPLIT === 'true';

type Variant = 'off' | 'on' | 'unsealed';

interface Lag {
  events: number;
  p50: number;
  p99: number;
  max: number;
}

/** Waits until the sealer has chained every event, then reads the lag of each (seconds). */
async function sealingLag(databaseUrl: string): Promise<Lag> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    for (let waited = 0; waited < 30_000; waited += 200) {
      const [{ n }] = await sql<[{ n: number }]>`select count(*)::int as n from actions.audit_unsealed`;
      if (n === 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const [row] = await sql<[{ events: number; p50: number; p99: number; max: number }]>`
      select count(*)::int as events,
        percentile_cont(0.5) within group (order by extract(epoch from c.sealed_at - e.at)) as p50,
        percentile_cont(0.99) within group (order by extract(epoch from c.sealed_at - e.at)) as p99,
        max(extract(epoch from c.sealed_at - e.at))::float8 as max
      from actions.audit_chain c join actions.audit_events e on e.id = c.event_id`;
    return { events: row.events, p50: Number(row.p50), p99: Number(row.p99), max: Number(row.max) };
  } finally {
    await sql.end();
  }
}

async function creation(
  infra: Infra,
  variant: Variant,
  label: string,
): Promise<{ figures: Figures; lag?: Lag; report: () => void }> {
  return withDatabase(infra, async (databaseUrl) => {
    const env: Record<string, string> = {
      LOG_REQUESTS: 'false',
      DB_POOL_SIZE: '10',
      RATE_LIMITS: 'false',
      RECEIPTS: String(variant !== 'off'),
    };
    // Held back: the sealer's first round comes a minute after start, long after the load.
    if (variant === 'unsealed') env.AUDIT_SEAL_INTERVAL_MS = '60000';
    const stack = await startStack({
      mode: 'all-in-one',
      databaseUrl,
      natsUrl: infra.natsUrl,
      name: 'bench-receipts',
      env,
    });
    try {
      const api = apiClient(stack.baseUrl);
      const account = await api.newAccount();
      const device = api.device(account.device_id);
      await device.post('/account/plan', { plan: 'unlimited' });
      await device.post('/rules', {
        name: 'small purchases',
        decision: 'auto_approve',
        action_type: 'purchase',
        amount_max_cents: 1000,
      });
      const cpu = cpuProbe(processGroups(stack, databaseUrl));
      let used = new Map<string, number>();
      const figures = await load(label, `${stack.baseUrl}/actions`, { 'x-api-key': account.api_key }, PURCHASE, {
        probe: { start: cpu.start, stop: () => undefined },
      });
      // With the sealer on, its catching up after the load is part of the creates' cost: read the CPU once it is done.
      const lag = variant === 'on' ? await sealingLag(databaseUrl) : undefined;
      used = cpu.stop();
      return { figures, lag, report: () => printCpuPerRequest(label, used, figures.total ?? 0) };
    } finally {
      await stack.stop();
    }
  });
}

export const receiptsCost: BenchCase = {
  name: 'receipts',
  description: `POST /actions (all-in-one, every create approved by a rule) with receipts and audit sealing on vs off, alternating over ${ROUNDS} rounds; sealing lag`,
  async run(infra) {
    const rows: Figures[] = [];
    const ratios: number[] = [];
    const lags: Lag[] = [];
    const reports: Array<() => void> = [];
    const names: Record<Variant, string> = {
      off: 'receipts and sealing off',
      on: 'receipts and sealing on',
      unsealed: 'receipts on, sealing after the load',
    };
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate which goes first, so warming the machine favours neither.
      const order: Variant[] = round % 2 === 1 ? ['off', 'on'] : ['on', 'off'];
      if (SPLIT) order.splice(1, 0, 'unsealed');
      const figures: Partial<Record<Variant, Figures>> = {};
      for (const variant of order) {
        const run = await creation(infra, variant, `round ${round}: ${names[variant]}`);
        figures[variant] = run.figures;
        reports.push(run.report);
        if (run.lag) lags.push(run.lag);
      }
      rows.push(...order.map((v) => figures[v]!));
      ratios.push(figures.on!.rps / figures.off!.rps);
    }
    table(rows);
    for (const report of reports) report();
    const sorted = [...ratios].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
    out(
      `on/off throughput per round: ${ratios.map((r) => r.toFixed(3)).join(', ')}; median ${median.toFixed(3)} (goal: at least 0.95)`,
    );
    for (const [i, lag] of lags.entries()) {
      out(
        `sealing lag, "on" run ${i + 1}: ${lag.events} events, p50 ${(lag.p50 * 1000).toFixed(0)} ms, p99 ${(lag.p99 * 1000).toFixed(0)} ms, max ${(lag.max * 1000).toFixed(0)} ms (goal: p99 under 2 s)`,
      );
    }
  },
};
