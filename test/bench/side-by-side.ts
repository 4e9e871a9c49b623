// Two settings of the all-in-one process (or of the processes over NATS) compared under the same load, side by side:
// each side runs its own process (or processes) on its own database, and the two take turns under load in short slices, so whatever the machine does meanwhile (a
// checkpoint, autovacuum, tables growing, a neighbour) falls on both alike. One run after the other swung by ±8 %
// between rounds on the quiet 2-core machine, and two processes of the same build and settings differ by a few per
// cent for as long as they live (an A/A run: JIT and heap layout), so every phase starts a fresh pair on two fresh
// databases, the start order swapped from one phase to the next. The figure is the ratio of the creates each side
// served in the same total time; the per-phase ratios show the scatter.
import { apiClient } from '../harness/http.js';
import { startStack, type Stack, type StackMode } from '../harness/stack.js';
import { PURCHASE } from './action-creation.js';
import { cpuProbe, processGroups } from './cpu.js';
import { load, out, table, withDatabase, type Figures, type Infra } from './load.js';

type Device = ReturnType<ReturnType<typeof apiClient>['device']>;

/** One setting under comparison. */
export interface SideSpec {
  /** How the side is named in the report, e.g. "metrics on". */
  label: string;
  /** The environment of the side's processes beyond the bench defaults. */
  env: Record<string, string>;
  /** Sets the account up once the process is up (its plan is unlimited already), e.g. a rule. */
  prepare?: (device: Device) => Promise<void>;
  /**
   * Waits, after each of the side's slices, for its background work to end, so that none of it runs during the
   * other side's slice; the wait is not counted as the side's time.
   */
  settle?: (databaseUrl: string) => Promise<void>;
  /** Runs beside the side's process while it is up (e.g. a scraper); returns how to stop it. */
  beside?: (stack: Stack) => () => void;
  /** Reads what the side left in its database at the end of a phase, before the database is dropped. */
  finish?: (databaseUrl: string) => Promise<void>;
}

/** What one side's slices added up to. */
export interface SideTotals {
  spec: SideSpec;
  creates: number;
  seconds: number;
  /** CPU milliseconds of the side's process (all of its processes), and of its database's backends, over its slices. */
  processMs: number;
  postgresMs: number;
  slices: Figures[];
  /** Creates served in each phase (a fresh process each), for the per-phase ratios. */
  perPhase: number[];
}

interface Running {
  stack: Stack;
  url: string;
  headers: Record<string, string>;
  cpu: ReturnType<typeof cpuProbe>;
  databaseUrl: string;
  warm: boolean;
  stopBeside: () => void;
}

export interface SideBySideOptions {
  phases: number;
  roundsPerPhase: number;
  sliceSeconds: number;
  /** The POST /actions body (default: the bench purchase). */
  body?: unknown;
  /** The stack each side runs (default: the all-in-one process). */
  mode?: StackMode;
}

async function startSide(infra: Infra, spec: SideSpec, databaseUrl: string, mode: StackMode): Promise<Running> {
  const stack = await startStack({
    mode,
    databaseUrl,
    natsUrl: infra.natsUrl,
    name: 'bench-side-by-side',
    env: { LOG_REQUESTS: 'false', DB_POOL_SIZE: '10', RATE_LIMITS: 'false', ...spec.env },
  });
  const api = apiClient(stack.baseUrl);
  const account = await api.newAccount();
  const device = api.device(account.device_id);
  await device.post('/account/plan', { plan: 'unlimited' });
  await spec.prepare?.(device);
  return {
    stack,
    url: `${stack.baseUrl}/actions`,
    headers: { 'x-api-key': account.api_key },
    cpu: cpuProbe(processGroups(stack, databaseUrl)),
    databaseUrl,
    warm: false,
    stopBeside: spec.beside?.(stack) ?? (() => {}),
  };
}

const newTotals = (spec: SideSpec): SideTotals => ({
  spec,
  creates: 0,
  seconds: 0,
  processMs: 0,
  postgresMs: 0,
  slices: [],
  perPhase: [],
});

/** One slice of load on one side; the first of a phase warms its fresh process up first. */
async function slice(side: SideTotals, running: Running, round: number, options: SideBySideOptions): Promise<void> {
  let used = new Map<string, number>();
  const probe = { start: () => running.cpu.start(), stop: () => (used = running.cpu.stop()) };
  const figures = await load(
    `round ${round}: ${side.spec.label}`,
    running.url,
    running.headers,
    options.body ?? PURCHASE,
    { seconds: options.sliceSeconds, warmUp: !running.warm, probe },
  );
  await side.spec.settle?.(running.databaseUrl);
  running.warm = true;
  side.creates += figures.total ?? 0;
  side.perPhase.push((side.perPhase.pop() ?? 0) + (figures.total ?? 0));
  side.seconds += options.sliceSeconds;
  const sum = (groups: Array<[string, number]>) => groups.reduce((total, [, ms]) => total + ms, 0);
  side.processMs += sum([...used].filter(([name]) => !name.startsWith('postgres') && name !== 'nats-server'));
  side.postgresMs += sum([...used].filter(([name]) => name.startsWith('postgres')));
  side.slices.push(figures);
}

/** One phase: a fresh pair of processes, `roundsPerPhase` rounds of one slice each, the order alternating. */
async function phase(
  infra: Infra,
  sides: [SideTotals, SideTotals],
  databases: [string, string],
  index: number,
  options: SideBySideOptions,
): Promise<void> {
  // Odd phases start the second side first: an A/A run found the second-started process slower.
  const order = index % 2 === 1 ? [sides[1], sides[0]] : sides;
  const running = new Map<SideTotals, Running>();
  try {
    for (const [i, side] of order.entries()) {
      running.set(side, await startSide(infra, side.spec, databases[i]!, options.mode ?? 'all-in-one'));
      side.perPhase.push(0);
    }
    for (let r = 0; r < options.roundsPerPhase; r++) {
      const round = index * options.roundsPerPhase + r + 1;
      // Alternate which goes first, so neither always follows the other's load.
      for (const side of round % 2 === 1 ? sides : [sides[1], sides[0]]) {
        await slice(side, running.get(side)!, round, options);
      }
    }
  } finally {
    for (const r of running.values()) r.stopBeside();
    await Promise.all([...running.values()].map((r) => r.stack.stop()));
  }
  for (const [side, r] of running) await side.spec.finish?.(r.databaseUrl);
}

/** Runs the comparison of `a` (the baseline) and `b`, each phase on two fresh databases; returns each side's totals. */
export async function sideBySide(
  infra: Infra,
  a: SideSpec,
  b: SideSpec,
  options: SideBySideOptions,
): Promise<[SideTotals, SideTotals]> {
  const sides: [SideTotals, SideTotals] = [newTotals(a), newTotals(b)];
  for (let i = 0; i < options.phases; i++) {
    await withDatabase(infra, (first) =>
      withDatabase(infra, (second) => phase(infra, sides, [first, second], i, options)),
    );
  }
  return sides;
}

const fixed = (n: number, digits = 3) => n.toFixed(digits);

/** Prints the slices, the totals, the per-phase ratios and the CPU per create; returns the b/a throughput ratio. */
export function reportSideBySide(a: SideTotals, b: SideTotals, goal: string): number {
  const total = (side: SideTotals): Figures => ({
    name: `all ${side.slices.length} slices: ${side.spec.label}`,
    rps: side.creates / side.seconds,
    p50: [...side.slices].map((s) => s.p50).sort((x, y) => x - y)[Math.floor(side.slices.length / 2)]!,
    p99: Math.max(...side.slices.map((s) => s.p99)),
    non2xx: side.slices.reduce((sum, s) => sum + s.non2xx, 0),
    errors: side.slices.reduce((sum, s) => sum + s.errors, 0),
  });
  table([...a.slices.flatMap((s, i) => [s, b.slices[i]!]), total(a), total(b)]);
  const phases = a.perPhase.map((n, i) => b.perPhase[i]! / Math.max(1, n));
  const mean = phases.reduce((x, y) => x + y, 0) / phases.length;
  const sd = Math.sqrt(phases.reduce((s, r) => s + (r - mean) ** 2, 0) / Math.max(1, phases.length - 1));
  out(
    `${b.spec.label} / ${a.spec.label} per phase (a fresh pair of processes each): ` +
      `${phases.map((r) => fixed(r)).join(', ')}; mean ${fixed(mean)} ± ${fixed(sd / Math.sqrt(phases.length))} (standard error)`,
  );
  const ratio = b.creates / Math.max(1, a.creates);
  out(`=> creates served in the same ${b.seconds} s: ${b.creates} / ${a.creates} = ${fixed(ratio)} (${goal})`);
  const per = (ms: number, side: SideTotals) => ms / Math.max(1, side.creates);
  const [aP, bP, aDb, bDb] = [per(a.processMs, a), per(b.processMs, b), per(a.postgresMs, a), per(b.postgresMs, b)];
  if (aP > 0) {
    out(
      `CPU ms per create (/proc), ${a.spec.label} / ${b.spec.label}: process ${fixed(aP)} / ${fixed(bP)}; its ` +
        `database's backends ${fixed(aDb)} / ${fixed(bDb)}; both together ${fixed((bP + bDb) / (aP + aDb))}`,
    );
  }
  return ratio;
}
