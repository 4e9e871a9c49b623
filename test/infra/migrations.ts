import { cpSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The migrations of `dir` numbered below `version`, copied to a folder of their own: migrating a test database from
 * it makes the database as it was before that version, for a test of what the later migrations do to its data.
 */
export function migrationsBefore(dir: string, version: number): string {
  const before = mkdtempSync(join(tmpdir(), 'aa-migrations-'));
  for (const file of readdirSync(dir).filter((f) => /^\d+_/.test(f) && Number(f.split('_')[0]) < version))
    cpSync(join(dir, file), join(before, file));
  return before;
}
