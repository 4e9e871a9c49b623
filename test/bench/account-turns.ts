// The policy and grants cases: one all-in-one process, `POST /actions` for accounts set up differently, in turns.
import type { Stack } from '../harness/stack.js';
import { PURCHASE } from './action-creation.js';
import { cpuProbe, printCpuPerRequest, processGroups } from './cpu.js';
import { alternating, ratio, roundRatios, settings, table } from './load.js';

type Turns = Awaited<ReturnType<typeof alternating>>;

/** Loads the stack's creates for each named account in turns (alternating), counting the stack's CPU. */
export function accountsInTurns(
  stack: Stack,
  databaseUrl: string,
  accounts: Array<[name: string, account: { api_key: string }]>,
): Promise<Turns> {
  return alternating(
    accounts.map(([name, account]) => ({
      name,
      url: `${stack.baseUrl}/actions`,
      headers: { 'x-api-key': account.api_key },
      body: PURCHASE,
    })),
    { rounds: settings.rounds, seconds: settings.sliceSeconds, cpu: cpuProbe(processGroups(stack, databaseUrl)) },
  );
}

/** Prints the turns of (a), (b), (c): the table, (b)/(a) with each round's, every case's CPU, and (c)/(a). */
export function printTurns(rows: Turns, goal: string): void {
  table(rows);
  ratio(`(b)/(a)${goal}`, rows[0]!, rows[1]!);
  roundRatios('(b)/(a)', rows[0]!, rows[1]!);
  for (const row of rows) printCpuPerRequest(row.name.slice(0, 3), row.cpuMs, row.total ?? 0);
  ratio('(c)/(a)', rows[0]!, rows[2]!);
}
