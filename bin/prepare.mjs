#!/usr/bin/env node
// Runs before `npm start`, `npm test` and `npm run bench`, so that each works on a fresh clone:
// installs dependencies when they are missing or older than the lockfile, then builds (tsc -b is incremental).
// The install's postinstall (package.json) applies patches/ to the dependencies and fails when one no longer applies.
import { execSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (command) => execSync(command, { cwd: root, stdio: 'inherit' });
const installed = join(root, 'node_modules', '.package-lock.json');
const lock = join(root, 'package-lock.json');

const stale = !existsSync(installed) || (existsSync(lock) && statSync(lock).mtimeMs > statSync(installed).mtimeMs);
if (stale) {
  process.stderr.write('Installing dependencies (first run or lockfile changed)...\n');
  try {
    run(existsSync(lock) ? 'npm ci --no-audit --no-fund' : 'npm install --no-audit --no-fund');
  } catch {
    // Some npm versions write a lockfile without the optional packages of other platforms (e.g. Biome's binaries)
    // and then refuse it in `npm ci`; `npm install` installs from the same lockfile (a patch that does not apply
    // fails it the same way).
    process.stderr.write('npm ci failed (see above); installing with npm install instead...\n');
    run('npm install --no-audit --no-fund');
  }
}
process.stderr.write('Building (tsc -b)...\n');
run('npx tsc -b');
