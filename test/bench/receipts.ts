// The cost of verifiable decisions: POST /actions on the all-in-one process with receipts and audit
// sealing on (RECEIPTS=true: a request that leaves pending signs a receipt, the sealer chains every audit event in
// the background) against off (RECEIPTS=false), side by side (side-by-side.ts): BENCH_RECEIPTS_PHASES fresh pairs
// of processes, each taking BENCH_RECEIPTS_ROUNDS turns of BENCH_RECEIPTS_SLICE_SECONDS under load. Two workloads:
// - the create bench: every create stays pending (no rule applies), so the cost is sealing each create's event;
// - the worst case for the request path: a rule approves every create, so each one also signs a receipt and writes
//   a second event to seal.
// After each "on" slice the next slice waits until the sealer has chained every event, so none of the sealing runs
// in the other side's time; what the sealer does after the slice ends (the last ~lag of events) is not charged to
// the "on" side. The figure is the ratio of the creates each side served in the same time (goal: at least 0.95). The
// sealing lag (event written → sealed into its chain) is read from the "on" side's databases at the end: p50, p99
// and max over every event (goal: p99 under 2 s).
import postgres from 'postgres';
import { out, type BenchCase, type Infra } from './load.js';
import { reportSideBySide, sideBySide, type SideSpec } from './side-by-side.js';

const PHASES = Number(process.env.BENCH_RECEIPTS_PHASES ?? 4);
const ROUNDS = Number(process.env.BENCH_RECEIPTS_ROUNDS ?? 4);
const SLICE_SECONDS = Number(process.env.BENCH_RECEIPTS_SLICE_SECONDS ?? 4);
/** BENCH_RECEIPTS_WORKLOADS: which of `pending,approved` to run (default both). */
const WORKLOADS = (process.env.BENCH_RECEIPTS_WORKLOADS ?? 'pending,approved').split(',').map((s) => s.trim());

interface Lag {
  events: number;
  p50: number;
  p99: number;
  max: number;
}

/** Waits until the sealer has chained every event of the database (30 s at most). */
async function untilSealed(databaseUrl: string): Promise<void> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    for (let waited = 0; waited < 30_000; waited += 50) {
      const [{ waiting }] = await sql<[{ waiting: boolean }]>`
        select exists (select 1 from actions.audit_unsealed) as waiting`;
      if (!waiting) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await sql.end();
  }
}

/** The lag of every sealed event of the database (seconds). */
async function sealingLag(databaseUrl: string): Promise<Lag> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
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

const approveTheBenchPurchase: SideSpec['prepare'] = async (device) => {
  await device.post('/rules', {
    name: 'small purchases',
    decision: 'auto_approve',
    action_type: 'purchase',
    amount_max_cents: 1000,
  });
};

async function compare(infra: Infra, workload: 'pending' | 'approved'): Promise<void> {
  const prepare = workload === 'approved' ? approveTheBenchPurchase : undefined;
  const lags: Lag[] = [];
  const off: SideSpec = { label: `receipts off, ${workload}`, env: { RECEIPTS: 'false' }, prepare };
  const on: SideSpec = {
    label: `receipts on, ${workload}`,
    env: { RECEIPTS: 'true' },
    prepare,
    settle: untilSealed,
    finish: async (databaseUrl) => void lags.push(await sealingLag(databaseUrl)),
  };
  out(`\n-- ${workload === 'pending' ? 'the create bench: creates stay pending' : 'every create approved by a rule'}`);
  const [a, b] = await sideBySide(infra, off, on, {
    phases: PHASES,
    roundsPerPhase: ROUNDS,
    sliceSeconds: SLICE_SECONDS,
  });
  reportSideBySide(a, b, 'goal: at least 0.95');
  for (const [i, lag] of lags.entries()) {
    out(
      `sealing lag, phase ${i + 1}: ${lag.events} events, p50 ${(lag.p50 * 1000).toFixed(0)} ms, p99 ` +
        `${(lag.p99 * 1000).toFixed(0)} ms, max ${(lag.max * 1000).toFixed(0)} ms (goal: p99 under 2 s)`,
    );
  }
}

export const receiptsCost: BenchCase = {
  name: 'receipts',
  description:
    `POST /actions (all-in-one) with receipts and audit sealing on and off side by side (${WORKLOADS.join(', ')}): ` +
    `${PHASES} fresh pairs of processes, each taking ${ROUNDS} turns of ${SLICE_SECONDS} s; sealing lag`,
  async run(infra) {
    for (const workload of WORKLOADS) {
      if (workload === 'pending' || workload === 'approved') await compare(infra, workload);
    }
  },
};
