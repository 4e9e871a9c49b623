// What each performance patch of patches/ is worth: POST /actions on two stacks that differ only in that one patch,
// side by side (side-by-side.ts), BENCH_PATCHES_PHASES fresh pairs of stacks, each taking BENCH_PATCHES_ROUNDS turns
// of BENCH_PATCHES_SLICE_SECONDS under load. Each side's processes load the patched package from a copy of it made
// for the run (dependency-copy-hook.mjs): one copy as installed, the other with that patch reversed (`patch -R`), so
// the two sides run the same code but for the patch. postgres.js patches are measured on the all-in-one process,
// @nats-io/nats-core patches on the processes over NATS (all-in-one sends nothing over NATS). The figure is the
// ratio of the creates each side served in the same total time; a performance patch is kept at 1.03 or more
// (patches/README.md). BENCH_PATCHES selects patches by a part of their file name (comma list).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Stack, StackMode } from '../harness/stack.js';
import { out, type BenchCase } from './load.js';
import { reportSideBySide, type SideSpec, type SideTotals, sideBySide } from './side-by-side.js';

const ROOT = resolve(import.meta.dirname, '../..');
const HOOK = resolve(import.meta.dirname, 'dependency-copy-hook.mjs');
const PHASES = Number(process.env.BENCH_PATCHES_PHASES ?? 3);
const ROUNDS = Number(process.env.BENCH_PATCHES_ROUNDS ?? 2);
const SLICE_SECONDS = Number(process.env.BENCH_PATCHES_SLICE_SECONDS ?? 5);
const KEEP_AT = 1.03;

/**
 * The patches of patches/ that only make things faster, each with the stack it shows on (the others fix defects and
 * stay whatever they cost).
 */
const PERFORMANCE_PATCHES: Array<{ file: string; mode: StackMode }> = [
  { file: '@nats-io+nats-core+3.4.0+002+flush-once-per-turn.patch', mode: 'processes' },
  { file: 'postgres+3.4.9+002+idle-connection-used-last-first.patch', mode: 'all-in-one' },
];

/** The package a patch-package file patches: "@scope+name+1.2.3+…" is @scope/name, "name+1.2.3+…" is name. */
export function packageOfPatch(file: string): string {
  const parts = file.split('+');
  return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

/** Copies of the installed package: as installed, and with the patch reversed; returns each copy's package folder. */
function copiesOf(file: string, scratch: string): { patched: string; unpatched: string } {
  const name = packageOfPatch(file);
  const copy = (side: string) => {
    const folder = join(scratch, side, 'node_modules', name);
    mkdirSync(join(folder, '..'), { recursive: true });
    cpSync(join(ROOT, 'node_modules', name), folder, { recursive: true });
    return folder;
  };
  const patched = copy('patched');
  const unpatched = copy('unpatched');
  // The patch's paths are a/node_modules/<name>/…: applied from the folder that holds the copy's node_modules.
  execFileSync('patch', ['-R', '-p1', '--silent', '--no-backup-if-mismatch', '-i', join(ROOT, 'patches', file)], {
    cwd: join(scratch, 'unpatched'),
  });
  return { patched, unpatched };
}

/** A side whose processes load `name` from `folder`, checked in their output when the side stops. */
function sideLoading(label: string, name: string, folder: string, problems: string[]): SideSpec {
  return {
    label,
    env: { NODE_OPTIONS: `--import ${HOOK}`, DEPENDENCY_COPY: `${name}=${folder}` },
    beside: (stack: Stack) => () => {
      if (!stack.logs().includes(`dependency-copy-hook: ${name} loaded from ${folder}`))
        problems.push(`${label}: its processes did not load ${name} from ${folder}`);
    },
  };
}

export const dependencyPatches: BenchCase = {
  name: 'patches',
  description:
    `POST /actions with each performance patch of patches/ and without it, side by side: ${PHASES} fresh pairs of ` +
    `stacks per patch, each taking ${ROUNDS} turns of ${SLICE_SECONDS} s (kept at ${KEEP_AT} or more)`,
  async run(infra) {
    const only = process.env.BENCH_PATCHES?.split(',').filter(Boolean);
    const selected = PERFORMANCE_PATCHES.filter((p) => !only || only.some((part) => p.file.includes(part)));
    const verdicts: string[] = [];
    for (const { file, mode } of selected) {
      if (!existsSync(join(ROOT, 'patches', file))) {
        verdicts.push(`${file}: no such patch (dropped?): update PERFORMANCE_PATCHES`);
        continue;
      }
      if (mode === 'processes' && !infra.natsUrl) {
        verdicts.push(`${file}: skipped, no NATS server`);
        continue;
      }
      out(`\n-- ${file} (${mode})`);
      const scratch = mkdtempSync(join(tmpdir(), 'aa-patch-bench-'));
      try {
        const name = packageOfPatch(file);
        const { patched, unpatched } = copiesOf(file, scratch);
        const problems: string[] = [];
        const without = sideLoading('without the patch', name, unpatched, problems);
        const withIt = sideLoading('with the patch', name, patched, problems);
        const [a, b] = await sideBySide(infra, without, withIt, {
          phases: PHASES,
          roundsPerPhase: ROUNDS,
          sliceSeconds: SLICE_SECONDS,
          mode,
        });
        const ratio = reportSideBySide(a, b, `kept at ${KEEP_AT} or more`);
        for (const problem of problems) out(`!! ${problem}`);
        const worth = problems.length ? 'NOT MEASURED (see above)' : ratio >= KEEP_AT ? 'keep' : 'below 3 %: drop';
        const cpuPerCreate = (side: SideTotals) => (side.processMs + side.postgresMs) / Math.max(1, side.creates);
        verdicts.push(
          `${file} (${mode}): creates/s with ${(b.creates / b.seconds).toFixed(0)}, without ` +
            `${(a.creates / a.seconds).toFixed(0)}, ratio ${ratio.toFixed(3)}; CPU ms per create (processes and ` +
            `their backends) with ${cpuPerCreate(b).toFixed(3)}, without ${cpuPerCreate(a).toFixed(3)}: ${worth}`,
        );
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    }
    out('\n=> performance patches:');
    if (selected.length === 0) out('   none listed in PERFORMANCE_PATCHES');
    for (const line of verdicts) out(`   ${line}`);
  },
};
