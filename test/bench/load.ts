// Shared pieces of the bench cases: a scratch database per stack, an autocannon run, and the result table.
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import postgres from 'postgres';
import type { resolveInfra } from '../infra/resolve.js';

export type Infra = Awaited<ReturnType<typeof resolveInfra>>;

export const settings = {
  seconds: Number(process.env.BENCH_SECONDS ?? 10),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 32),
  /** Cases compared within one process (policy, grants) take turns: this many rounds of slices this long. */
  rounds: Number(process.env.BENCH_ROUNDS ?? 4),
  sliceSeconds: Number(process.env.BENCH_SLICE_SECONDS ?? 4),
};

/** Writes one line of the report. */
export const out = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};

export interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** Requests answered in the measured run. */
  total?: number;
}

/** Runs `use` on a fresh database (dropped afterwards) where the infrastructure allows one per run. */
export async function withDatabase<T>(infra: Infra, use: (url: string) => Promise<T>): Promise<T> {
  if (!infra.isolatedDatabases) return use(infra.databaseUrl);
  const name = `aa_bench_${randomBytes(4).toString('hex')}`;
  const admin = postgres(infra.databaseUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(infra.databaseUrl);
  url.pathname = `/${name}`;
  try {
    return await use(url.toString());
  } finally {
    await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin.end();
  }
}

/**
 * Loads one URL with the same POST at a steady concurrency, after a 2 s warm-up; `warmUp: false` skips the warm-up
 * (the server is already warm). For latency below saturation see paced.ts.
 */
export async function load(
  name: string,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  options: {
    warmUp?: boolean;
    /** Length of the measured run (default BENCH_SECONDS). */
    seconds?: number;
    probe?: { start(): void; stop(): unknown };
    /** Headers made afresh for every request (e.g. a new Idempotency-Key each time). */
    eachRequest?: () => Record<string, string>;
  } = {},
): Promise<Figures> {
  const { eachRequest } = options;
  const run = (duration: number) =>
    autocannon({
      url,
      method: 'POST',
      connections: settings.connections,
      duration,
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      ...(eachRequest
        ? {
            requests: [
              {
                setupRequest: (req: autocannon.Request) => ({
                  ...req,
                  headers: { ...req.headers, ...eachRequest() },
                }),
              },
            ],
          }
        : {}),
    });
  if (options.warmUp !== false) await run(2); // warm-up: JIT, connection pools, the auth cache
  options.probe?.start();
  const result = await run(options.seconds ?? settings.seconds);
  options.probe?.stop();
  return figuresOf(name, result);
}

/** The pause after each slice of `alternating`: the sealer seals every 200 ms, the relay deletes every 100 ms. */
const SETTLE_MS = 1000;

/** One of the cases that `alternating` loads in turns. */
export interface Side {
  name: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  /** Counts the CPU of this side's processes (else the `cpu` of the options, if any). */
  cpu?: CpuCounter;
}

/** Counts CPU milliseconds by process group between start and stop (cpu.ts). */
export interface CpuCounter {
  start(): void;
  stop(): Map<string, number>;
}

/**
 * Loads several cases in turns: a warm-up each, then `rounds` rounds of a `seconds` slice each, the
 * order reversed every other round (A B, B A) so that drift over the run and tables growing fall on every case
 * alike. One slice after another on this 2-core machine swung by up to ±15 % (the same case twice: 4,004 then
 * 5,246 creates/s). After each slice a pause lets the case's background work end (its CPU counted to the case).
 * A case's figures are its slices' sums (req/s: all its requests over all its time) and the mean
 * of their p50 and p99; `perRound` has each round's req/s, for the scatter of a ratio.
 */
export async function alternating(
  sides: Side[],
  options: {
    rounds: number;
    seconds: number;
    cpu?: CpuCounter;
    /** Called once the warm-ups are over, as the measured slices begin. */
    measuring?: () => void;
  },
): Promise<Array<Figures & { perRound: number[]; cpuMs: Map<string, number> }>> {
  for (const side of sides)
    await load(`${side.name} (warm-up)`, side.url, side.headers, side.body, { seconds: 2, warmUp: false });
  options.measuring?.();
  const slices = sides.map(() => [] as Figures[]);
  const cpuMs = sides.map(() => new Map<string, number>());
  for (let round = 0; round < options.rounds; round++) {
    const order = sides.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) {
      const side = sides[i]!;
      const cpu = side.cpu ?? options.cpu;
      cpu?.start();
      slices[i]!.push(
        await load(side.name, side.url, side.headers, side.body, { seconds: options.seconds, warmUp: false }),
      );
      // The side's background work (sealing, the relay's deletes) ends before the next side's slice, and its CPU
      // counts to this side; the pause is not counted as this side's time.
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      for (const [group, ms] of cpu?.stop() ?? []) cpuMs[i]!.set(group, (cpuMs[i]!.get(group) ?? 0) + ms);
    }
  }
  return sides.map((side, i) => {
    const mine = slices[i]!;
    const mean = (f: (x: Figures) => number) => mine.reduce((sum, x) => sum + f(x), 0) / mine.length;
    const total = mine.reduce((sum, x) => sum + (x.total ?? 0), 0);
    return {
      name: side.name,
      rps: total / (options.seconds * mine.length),
      p50: mean((x) => x.p50),
      p99: mean((x) => x.p99),
      non2xx: mine.reduce((sum, x) => sum + x.non2xx, 0),
      errors: mine.reduce((sum, x) => sum + x.errors, 0),
      total,
      perRound: mine.map((x) => x.rps),
      cpuMs: cpuMs[i]!,
    };
  });
}

/** Prints each round's ratio of a case to its baseline (alternating): the scatter behind the summed ratio. */
export function roundRatios(label: string, baseline: { perRound: number[] }, other: { perRound: number[] }): void {
  const each = other.perRound.map((rps, i) => (rps / baseline.perRound[i]!).toFixed(2));
  out(`  ${label} by round: ${each.join(', ')}`);
}

/** Loads one URL with GET at `connections` for `seconds`, after a 1 s warm-up. */
export async function loadGet(
  name: string,
  url: string,
  headers: Record<string, string>,
  options: { connections: number; seconds: number },
): Promise<Figures> {
  const run = (duration: number) =>
    autocannon({ url, method: 'GET', connections: options.connections, duration, headers });
  await run(1);
  return figuresOf(name, await run(options.seconds));
}

function figuresOf(name: string, result: autocannon.Result): Figures {
  return {
    name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    total: result.requests.total,
  };
}

/** Prints figures as a table. */
export function table(rows: Figures[]): void {
  out(
    `${'case'.padEnd(52)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'non-2xx'.padStart(8)}`,
  );
  for (const r of rows) {
    out(
      `${r.name.padEnd(52)} ${r.rps.toFixed(0).padStart(9)} ${r.p50.toFixed(r.p50 < 10 ? 2 : 1).padStart(8)} ${r.p99.toFixed(r.p99 < 10 ? 2 : 1).padStart(8)} ${String(r.non2xx + r.errors).padStart(8)}`,
    );
  }
}

/** The middle of some figures (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Prints the ratio of a case to its baseline: throughput, and p50/p99 latency. */
export function ratio(label: string, baseline: Figures, other: Figures): void {
  out(
    `ratio ${label}: throughput ${(other.rps / baseline.rps).toFixed(2)}, p50 latency ${(other.p50 / baseline.p50).toFixed(2)}, p99 latency ${(other.p99 / baseline.p99).toFixed(2)}`,
  );
}

/** One section of `npm run bench`. */
export interface BenchCase {
  name: string;
  description: string;
  run(infra: Infra): Promise<void>;
}
