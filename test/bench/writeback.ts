// The kernel's write-back of dirty page-cache pages, seen in /proc/meminfo (Linux only). Postgres writes the pages of
// growing tables into the page cache; the kernel writes an inode's dirty pages back once they are 30 s old
// (vm.dirty_expire_centisecs), all at once, and a WAL flush queued behind that burst on the same disk waits for it.
// After the CHECKPOINT that starts each contender's paced runs, the first burst came 30 s later, inside the second
// run, every time (about 125 MB at 2,300 creates/s: a bare commit held 50-75 ms).
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/** A fall of the page cache's dirty total between two samples: pages the kernel wrote back. */
export interface WritebackBurst {
  /** Seconds after the probe started. */
  atSeconds: number;
  megabytes: number;
}

const SAMPLE_MS = 200;
/** A smaller fall is the steady trickle of write-back, not a burst. */
const BURST_KB = 16 * 1024;

function dirtyKb(): number | null {
  try {
    const match = /^Dirty:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/** Watches for bursts of write-back while a run goes; stop() answers them, or null where /proc/meminfo is absent. */
export function writebackProbe() {
  const bursts: WritebackBurst[] = [];
  let started = 0;
  let last: number | null = null;
  let timer: NodeJS.Timeout | undefined;
  const sample = () => {
    const now = dirtyKb();
    if (now !== null && last !== null && last - now > BURST_KB)
      bursts.push({ atSeconds: (performance.now() - started) / 1000, megabytes: (last - now) / 1024 });
    last = now;
  };
  return {
    start(): void {
      started = performance.now();
      last = dirtyKb();
      timer = setInterval(sample, SAMPLE_MS);
      timer.unref();
    },
    stop(): WritebackBurst[] | null {
      clearInterval(timer);
      return last === null ? null : bursts;
    },
  };
}

/** One run's bursts as a phrase for the report. */
export function describeBursts(bursts: WritebackBurst[] | null | undefined): string {
  if (!bursts) return 'unknown';
  if (!bursts.length) return 'none';
  return bursts.map((b) => `${Math.round(b.megabytes)} MB at ${b.atSeconds.toFixed(1)} s`).join(' and ');
}
