import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageOfPatch } from './dependency-patches.js';

const ROOT = resolve(import.meta.dirname, '../..');
const HOOK = resolve(import.meta.dirname, 'dependency-copy-hook.mjs');
const scratch = mkdtempSync(join(tmpdir(), 'aa-copy-hook-'));

/** Copies an installed package to the scratch folder; returns the copy's package folder. */
function copyOf(name: string): string {
  const folder = join(scratch, name.replace('/', '+'), 'node_modules', name);
  cpSync(join(ROOT, 'node_modules', name), folder, { recursive: true });
  return folder;
}

/** Runs an ES module script in the repository with the hook sending `name` to `folder`; returns what it printed. */
function runWithCopy(name: string, folder: string, script: string): { stdout: string; stderr: string } {
  const child = spawnSync(process.execPath, ['--import', HOOK, '--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { ...process.env, DEPENDENCY_COPY: `${name}=${folder}` },
    encoding: 'utf8',
  });
  expect(child.status, child.stderr).toBe(0);
  return { stdout: child.stdout, stderr: child.stderr };
}

describe('the dependency copy hook of the patches bench', () => {
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('sends an import of an ES module package to the copy, and says so', () => {
    const folder = copyOf('postgres');
    const { stdout, stderr } = runWithCopy(
      'postgres',
      folder,
      `import postgres from 'postgres';
       console.log(typeof postgres, import.meta.resolve('postgres'));`,
    );
    expect(stdout.trim()).toBe(`function file://${folder}/src/index.js`);
    expect(stderr).toContain(`dependency-copy-hook: postgres loaded from ${folder}`);
  });

  it('sends a require() of a CommonJS package to the copy, and finds what the copy requires by name', () => {
    const folder = copyOf('@nats-io/nats-core');
    const { stdout } = runWithCopy(
      '@nats-io/nats-core',
      folder,
      `import { createRequire } from 'node:module';
       const require = createRequire(process.cwd() + '/x.js');
       const core = require('@nats-io/nats-core/internal');
       const loaded = Object.keys(require.cache).filter((f) => f.includes('/nats-core/lib/'));
       console.log(JSON.stringify({ next: typeof core.nuid?.next, loaded }));`,
    );
    const seen = JSON.parse(stdout) as { next: string; loaded: string[] };
    expect(seen.next).toBe('function');
    expect(seen.loaded.length).toBeGreaterThan(0);
    for (const file of seen.loaded) expect(file.startsWith(`${folder}/lib/`), file).toBe(true);
  });

  it('names the package a patch-package file patches', () => {
    expect(packageOfPatch('postgres+3.4.9+001+settle-on-write-after-close.patch')).toBe('postgres');
    expect(packageOfPatch('@nats-io+nats-core+3.4.0+002+flush.patch')).toBe('@nats-io/nats-core');
  });
});
