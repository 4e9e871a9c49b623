// Action creation through the gateway: the all-in-one process (in-process bus) and one process per service over
// NATS, against the bare reference server (reference.ts), each on its own database of the same Postgres. The three
// are up together and take turns under load (alternating: slices in r a b, b a r order), so that the machine's
// drift and the tables' growth fall on all alike: one after the other, the reference alone swung between 8,500 and
// 11,800 creates/s from run to run. Then each alone (the others stopped) at half its rate, evenly paced, three runs
// (each measured after 6 s at that pace): latency below saturation, beside the floor, a server answering from memory
// at the same pace (what the machine and the generator alone add), and a bare commit probed beside each run (what the
// disk alone adds: a run whose p99 a stalled WAL flush set shows a slow probe too).
import { apiClient } from '../harness/http.js';
import { type Stack, startStack, type StackMode } from '../harness/stack.js';
import { capacityAt, describeCapacity } from './capacity-model.js';
import { cpuProbe, groupsOf, printCpuPerRequest, processGroups } from './cpu.js';
import {
  checkpointNow,
  checkpointsBegun,
  commitProbe,
  type CommitFloor,
  databaseProbe,
  printDatabasePerRequest,
  printWaits,
  waitSampler,
  type WaitShares,
} from './db-stats.js';
import {
  alternating,
  load,
  median,
  out,
  ratio,
  roundRatios,
  settings,
  table,
  withDatabase,
  type BenchCase,
  type Figures,
  type Infra,
  type Side,
} from './load.js';
import { type GeneratorDelay, type LateRequests, pacedLoad } from './paced.js';
import { startFloorServer, startReference } from './reference.js';
import { STORED_REQUESTS, storeReferenceRequests, storeServiceRequests } from './stored-requests.js';
import { describeStageShares, type Stage, type StageShare, stageProbe } from './stage-shares.js';
import { describeBursts, type WritebackBurst, writebackProbe } from './writeback.js';

export const PURCHASE = {
  action_type: 'purchase',
  title: 'Bench purchase',
  amount: 9.99,
  metadata: { order: 'bench' },
};

/** One of the servers under comparison, up and ready for load. */
interface Contender {
  side: Side;
  database: ReturnType<typeof databaseProbe>;
  /** Its own database (its backends' waits are sampled while it is paced). */
  databaseUrl: string;
  /** The latency histograms a service keeps of its creates (stage-shares.ts); none for the reference. */
  stages: Stage[];
  stop(): Promise<void>;
}

async function referenceContender(databaseUrl: string): Promise<Contender> {
  const server = await startReference(databaseUrl);
  return {
    side: {
      name: '(r) reference: fastify + zod + one insert',
      url: `${server.url}/actions`,
      headers: {},
      body: PURCHASE,
      cpu: cpuProbe(groupsOf({ reference: [server.pid] }, databaseUrl)),
    },
    database: databaseProbe(databaseUrl),
    databaseUrl,
    stages: [],
    stop: () => server.stop(),
  };
}

/**
 * Where a service's creates are timed: the gateway's HTTP duration and its bus round trip to actions, and over NATS
 * the actions handler too (its metrics port is in its "metrics listening" log line).
 */
function createStages(stack: Stack): Stage[] {
  const gateway = `${new URL(stack.baseUrl).origin}/metrics`;
  const create = { subject: 'actions.create' };
  const stages: Stage[] = [
    {
      name: 'gateway',
      metricsUrl: gateway,
      metric: 'agent_auth_http_request_duration_seconds',
      series: { method: 'POST', route: '/api/v1/actions' },
    },
    { name: 'bus round trip', metricsUrl: gateway, metric: 'agent_auth_bus_request_duration_seconds', series: create },
  ];
  const port = /"service":"actions","metrics_port":(\d+)/.exec(stack.logs())?.[1];
  if (stack.mode === 'processes' && port)
    stages.push({
      name: 'actions handler',
      metricsUrl: `http://127.0.0.1:${port}/metrics`,
      metric: 'agent_auth_bus_handled_duration_seconds',
      series: create,
    });
  return stages;
}

async function serviceContender(infra: Infra, mode: StackMode, name: string, databaseUrl: string): Promise<Contender> {
  const stack = await startStack({
    mode,
    databaseUrl,
    natsUrl: infra.natsUrl,
    name: `bench-${mode}`,
    env: { LOG_REQUESTS: 'false', DB_POOL_SIZE: '10', RATE_LIMITS: 'false' },
  }); // one key at full speed would pass any limit; the admission case measures the limit
  try {
    const api = apiClient(stack.baseUrl);
    const account = await api.newAccount();
    // A busy account is a paying one: on the unlimited plan creations do not queue on the quota counter.
    await api.device(account.device_id).post('/account/plan', { plan: 'unlimited' });
    return {
      side: {
        name,
        url: `${stack.baseUrl}/actions`,
        headers: { 'x-api-key': account.api_key },
        body: PURCHASE,
        // Postgres CPU of this database's backends only: the other contenders' backends are not this one's work.
        cpu: cpuProbe(processGroups(stack, databaseUrl)),
      },
      database: databaseProbe(databaseUrl),
      databaseUrl,
      stages: createStages(stack),
      stop: () => stack.stop(),
    };
  } catch (err) {
    await stack.stop();
    throw err;
  }
}

/**
 * Seconds each paced run goes at its rate before it is measured (pacedLoad's `warmUpSeconds` says why). A service
 * comes out of its full-speed warm-up with work of its own still to catch up (the outbox relay, the audit sealer):
 * with 2 s, its first paced run often began with creates already 100-260 ms late, and its p99 was that backlog
 * draining (62-224 ms against 35-45 with 6 s, in a scratch harness taking turns).
 */
const PACED_WARM_UP_SECONDS = Number(process.env.BENCH_PACED_WARM_UP ?? 6);
/** Seconds at full speed a contender started again for its paced run gets first: its JIT, as in the full-speed runs. */
const JIT_WARM_UP_SECONDS = 3;

/**
 * Paced runs of each contender, one after another: on this two-core machine one 10 s run's p99 swung from 8 to 43 ms
 * with nothing changed (a single stall of the disk's flush or of the CPU the generator, Node and Postgres share
 * sets it), so each contender is paced this many times and every run's p99 is printed beside their median.
 */
const PACED_RUNS = Number(process.env.BENCH_PACED_RUNS ?? 3);

/** The goal for a create's p99 at half the maximum rate (issue 13). */
const HALF_RATE_P99_GOAL_MS = 10;
/** The rate the capacity model sizes the deployment for (docs/capacity.md, "10,000 creates per second"). */
const CAPACITY_RATE = 10_000;

type PacedFigures = Figures & {
  warmUpP99?: number;
  late?: LateRequests;
  generatorDelay?: GeneratorDelay;
  checkpoints?: number | null;
  commits?: CommitFloor;
  writeback?: WritebackBurst[] | null;
  stages?: StageShare[];
};

/** One contender's paced runs, the floor at the same pace, and what its database waited for meanwhile. */
interface PacedContender {
  tag: string;
  runs: PacedFigures[];
  floor: PacedFigures;
  waits: WaitShares;
}

/**
 * Each contender alone at half the rate it reached, evenly paced (open loop), latency from each request's due time:
 * the others stopped (idle, their workers still woke every few hundred ms and their databases shared the server), it
 * is started again on its own database as the full-speed runs left it, warmed at full speed, then paced PACED_RUNS
 * times; then the floor server at the same pace, which shows what the machine and the generator alone add. Each
 * starts after a CHECKPOINT: the full-speed rounds leave about 1 GB of WAL, and the spread checkpoint it calls for
 * otherwise began at a random point of the paced runs and fell on whichever was paced then (a service's p99 went
 * from 13-15 to 26-45 ms, the reference's did not move); the checkpoints begun while each run is paced are printed.
 */
async function pacedEachAlone(starts: Array<() => Promise<Contender>>, full: Figures[]): Promise<PacedContender[]> {
  const paced: PacedContender[] = [];
  const floor = await startFloorServer();
  try {
    const pace = (name: string, url: string, headers: Record<string, string>, body: unknown, rate: number) =>
      pacedLoad(name, url, headers, body, {
        rate,
        seconds: settings.seconds,
        connections: settings.connections,
        warmUpSeconds: PACED_WARM_UP_SECONDS,
        lateMs: HALF_RATE_P99_GOAL_MS,
      });
    await pace('warm-up', `${floor.url}/actions`, {}, PURCHASE, full[0]!.rps / 2); // its JIT, as the others had
    for (const [i, start] of starts.entries()) {
      const { side, databaseUrl, stages, stop } = await start();
      try {
        await checkpointNow(databaseUrl);
        await load('warm-up', side.url, side.headers, side.body, { warmUp: false, seconds: JIT_WARM_UP_SECONDS });
        const rate = full[i]!.rps / 2;
        const tag = side.name.slice(0, 3);
        const sampler = waitSampler(databaseUrl);
        sampler.start();
        const runs: PacedFigures[] = [];
        for (let run = 1; run <= PACED_RUNS; run++) {
          const before = await checkpointsBegun(databaseUrl);
          const name = `${tag}  at half its rate, paced (${Math.round(rate)}/s), run ${run}`;
          const probe = commitProbe(databaseUrl);
          const kernel = writebackProbe();
          const timed = stageProbe(stages, HALF_RATE_P99_GOAL_MS / 1000);
          await timed.start();
          await probe.start();
          kernel.start();
          const figures = await pace(name, side.url, side.headers, side.body, rate);
          const writeback = kernel.stop();
          const stageShares = await timed.stop();
          const commits = await probe.stop();
          const after = await checkpointsBegun(databaseUrl);
          const checkpoints = before === null || after === null ? null : after - before;
          runs.push({ ...figures, commits, checkpoints, writeback, stages: stageShares });
        }
        const waits = await sampler.stop();
        const floorRun = await pace(
          `${tag}  floor: from memory, same pace`,
          `${floor.url}/actions`,
          {},
          PURCHASE,
          rate,
        );
        paced.push({ tag, runs, floor: floorRun, waits });
      } finally {
        await stop();
      }
    }
  } finally {
    await floor.stop();
  }
  return paced;
}

/**
 * Says so when the machine itself could not show the goal: the reference (one insert) missed it too, or a bare
 * commit beside its runs did. A service's durable create cannot beat either; its verdict then says more about the
 * machine's flushes and cores than about the service.
 */
function printMachineVerdict(reference: PacedContender): void {
  const referenceP99 = median(reference.runs.map((r) => r.p99));
  const commitP99s = reference.runs.flatMap((r) => (r.commits ? [r.commits.p99] : []));
  const commitP99 = commitP99s.length ? median(commitP99s) : undefined;
  const missed = [
    referenceP99 >= HALF_RATE_P99_GOAL_MS ? `the reference's own median p99 was ${referenceP99.toFixed(1)} ms` : '',
    commitP99 !== undefined && commitP99 >= HALF_RATE_P99_GOAL_MS
      ? `a bare commit beside its runs had a median p99 of ${commitP99.toFixed(1)} ms`
      : '',
  ].filter(Boolean);
  if (missed.length)
    out(
      `the machine could not show the half-rate goal in this run: ${missed.join('; ')} (goal < ${HALF_RATE_P99_GOAL_MS} ms)`,
    );
}

/** One run's late creates as a phrase: a few full windows are stalls, many thin ones a slow path. */
function describeLate(late: LateRequests | undefined): string {
  if (!late) return 'unknown';
  if (!late.count) return 'none';
  const worst = late.worst.map((w) => `${w.count} at ${w.atSeconds.toFixed(1)} s`).join(', ');
  return `${late.count} in ${late.windows} windows (${worst})`;
}

/** The generator's own event-loop delay in one run, as "p99 / longest". */
function describeDelay(delay: GeneratorDelay | undefined): string {
  return delay ? `${delay.p99.toFixed(1)} / ${delay.max.toFixed(1)}` : 'unknown';
}

/** Each contender's p99 at half its rate, run by run and their median, beside the floor's at that pace. */
function printFloors(paced: PacedContender[]): void {
  for (const { tag, runs, floor, waits } of paced) {
    const p99s = runs.map((r) => r.p99);
    out(
      `p99 at half rate ${tag}: median ${median(p99s).toFixed(1)} ms of ${runs.length} runs (${p99s.map((p) => p.toFixed(1)).join(', ')}; goal < ${HALF_RATE_P99_GOAL_MS} ms); ` +
        `the floor at the same pace ${floor.p99.toFixed(1)} ms; the ${PACED_WARM_UP_SECONDS} s before each, at that pace, not counted: ` +
        `p99 ${runs.map((r) => r.warmUpP99?.toFixed(1)).join(', ')} ms; checkpoints begun while paced: ${runs.map((r) => r.checkpoints ?? 'unknown').join(', ')}`,
    );
    out(
      `  a bare commit beside each run of ${tag} (commitProbe), p99 / longest: ${runs.map((r) => (r.commits ? `${r.commits.p99.toFixed(1)} / ${r.commits.max.toFixed(1)}` : 'unknown')).join(', ')} ms`,
    );
    out(
      `  the kernel's write-back bursts during each run of ${tag} (from the start of its ${PACED_WARM_UP_SECONDS} s warm-up; writeback.ts): ${runs.map((r) => describeBursts(r.writeback)).join('; ')}`,
    );
    out(
      `  creates over ${HALF_RATE_P99_GOAL_MS} ms late in each run of ${tag}, and the 100 ms windows with the most (from the start of its warm-up): ${runs.map((r) => describeLate(r.late)).join('; ')}`,
    );
    out(
      `  the generator's own event-loop delay in each run of ${tag} (its sends wait as long), p99 / longest: ${runs.map((r) => describeDelay(r.generatorDelay)).join(', ')} ms; the floor's: ${describeDelay(floor.generatorDelay)} ms`,
    );
    if (runs.some((r) => r.stages?.length))
      out(
        `  creates over ${HALF_RATE_P99_GOAL_MS} ms in each run of ${tag} and its warm-up, by where the service timed them (stage-shares.ts): ${runs.map((r) => describeStageShares(r.stages)).join('; ')}`,
      );
    printWaits(`${tag} at half rate`, waits);
  }
  if (paced[0]) printMachineVerdict(paced[0]);
}

async function compare(infra: Infra, databases: string[]): Promise<void> {
  const starts: Array<() => Promise<Contender>> = [
    () => referenceContender(databases[0]!),
    () => serviceContender(infra, 'all-in-one', '(a) all-in-one (in-process bus)', databases[1]!),
  ];
  if (infra.natsUrl)
    starts.push(() => serviceContender(infra, 'processes', '(b) one process per service over NATS', databases[2]!));
  const contenders: Contender[] = [];
  try {
    for (const start of starts) contenders.push(await start());
    if (STORED_REQUESTS > 0) await storeReferenceRequests(databases[0]!, STORED_REQUESTS);
    const full = await alternating(
      contenders.map((c) => c.side),
      {
        rounds: settings.rounds,
        seconds: settings.sliceSeconds,
        measuring: () => {
          for (const c of contenders) c.database.start();
        },
      },
    );
    const writes = await Promise.all(contenders.map((c, i) => c.database.perRequest(full[i]!.total ?? 0)));
    for (const c of contenders.splice(0).reverse()) await c.stop();
    const paced = await pacedEachAlone(starts, full);
    table([...full, ...paced.flatMap((c) => [...c.runs, c.floor])]);
    printFloors(paced);
    const [reference, allInOne, processes] = full;
    ratio('(a) all-in-one / reference', reference!, allInOne!);
    roundRatios('(a)/(r)', reference!, allInOne!);
    if (processes) {
      ratio('(b) processes / reference', reference!, processes);
      roundRatios('(b)/(r)', reference!, processes);
      ratio('(b)/(a)', allInOne!, processes);
    } else out('(b) skipped: no NATS server reachable');
    if (processes?.total) {
      const perCreate = new Map([...processes.cpuMs].map(([name, ms]) => [name, ms / processes.total!] as const));
      out(describeCapacity(CAPACITY_RATE, capacityAt(CAPACITY_RATE, new Map(perCreate))));
    }
    for (const [i, row] of full.entries()) {
      printCpuPerRequest(`${row.name.slice(0, 3)} at full speed`, row.cpuMs, row.total ?? 0);
      printDatabasePerRequest(`${row.name.slice(0, 3)} at full speed`, writes[i]!);
    }
  } finally {
    for (const c of contenders.reverse()) await c.stop();
  }
}

export const actionCreation: BenchCase = {
  name: 'create',
  description: 'POST /actions: the reference, all-in-one and one process per service over NATS, taking turns',
  async run(infra) {
    await withDatabase(infra, (reference) =>
      withDatabase(infra, (allInOne) =>
        withDatabase(infra, async (processes) => {
          if (STORED_REQUESTS > 0) {
            const started = performance.now();
            await storeServiceRequests(allInOne, STORED_REQUESTS);
            if (infra.natsUrl) await storeServiceRequests(processes, STORED_REQUESTS);
            out(
              `  ${STORED_REQUESTS.toLocaleString('en')} requests stored in each contender's database first ` +
                `(BENCH_CREATE_STORED; the reference's once it is up), ${((performance.now() - started) / 1000).toFixed(1)} s`,
            );
          }
          await compare(infra, [reference, allInOne, processes]);
        }),
      ),
    );
  },
};
