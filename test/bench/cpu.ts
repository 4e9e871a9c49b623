// CPU time per request of each process serving a bench run: the stack's own processes, and the machine's
// nats-server and Postgres processes (every backend). Read from /proc (Linux); elsewhere nothing is printed.
// On a shared machine the NATS and Postgres figures include other users' work.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Stack } from '../harness/stack.js';
import { out } from './load.js';

const TICK_MS = 10; // USER_HZ is 100 on Linux

function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime + stime
  } catch {
    return 0;
  }
}

function pidsOf(name: string): number[] {
  try {
    return execFileSync('pgrep', ['-x', name], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The Postgres backends connected to one database (their title is "postgres: user database host(port) state"). */
function backendsOf(database: string): number[] {
  return pidsOf('postgres').filter((pid) => {
    try {
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      return title.split(' ').includes(database);
    } catch {
      return false;
    }
  });
}

type Groups = Map<string, () => number[]>;

/**
 * The processes of a stack by service, then nats-server and postgres. Given the stack's database URL, postgres is
 * only the backends connected to that database: on a shared machine the others are other people's work (the
 * server's shared processes, WAL writer and checkpointer, are then left out too).
 */
export function processGroups(stack: Stack, databaseUrl?: string): Groups {
  const services: Record<string, number[]> = {};
  for (const service of ['all-in-one', 'gateway', 'actions', 'policy', 'vault-executor', 'notifier']) {
    const pids = stack
      .processes(service)
      .map((c) => c.pid!)
      .filter(Boolean);
    if (pids.length) services[service] = pids;
  }
  return groupsOf(services, databaseUrl);
}

/** Named processes of a bench's own (e.g. the reference server), then nats-server and postgres as above. */
export function groupsOf(processes: Record<string, number[]>, databaseUrl?: string): Groups {
  const groups: Groups = new Map();
  for (const [name, pids] of Object.entries(processes)) groups.set(name, () => pids);
  groups.set('nats-server', () => pidsOf('nats-server'));
  const database = databaseUrl && decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  groups.set(database ? 'postgres (its backends)' : 'postgres', () =>
    database ? backendsOf(database) : pidsOf('postgres'),
  );
  return groups;
}

/** Starts counting CPU time of each group; `stop` returns milliseconds per group. */
export function cpuProbe(groups: Groups) {
  const read = () =>
    new Map([...groups].map(([name, pids]) => [name, new Map(pids().map((pid) => [pid, cpuTicks(pid)]))]));
  let before = read();
  return {
    start() {
      before = read();
    },
    /** CPU milliseconds each group used since start (processes that came and went in between are missed). */
    stop(): Map<string, number> {
      const after = read();
      return new Map(
        [...after].map(([name, pids]) => {
          let ticks = 0;
          for (const [pid, t] of pids) ticks += t - (before.get(name)?.get(pid) ?? t);
          return [name, ticks * TICK_MS];
        }),
      );
    },
  };
}

/** Prints CPU milliseconds per request of each group, and the total. */
export function printCpuPerRequest(label: string, used: Map<string, number>, requests: number): void {
  if (requests <= 0 || [...used.values()].every((v) => v === 0)) return;
  const parts = [...used].map(([name, ms]) => `${name} ${(ms / requests).toFixed(2)}`);
  const total = [...used.values()].reduce((a, b) => a + b, 0) / requests;
  out(`cpu ms per request, ${label}: ${parts.join(', ')}; total ${total.toFixed(2)}`);
}
