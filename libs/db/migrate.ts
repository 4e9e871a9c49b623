import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { Sql } from './connect.js';

/** The folder of the package that contains a module, whether it runs from source or from dist/. */
export function packageDir(importMetaUrl: string): string {
  let dir = dirname(fileURLToPath(importMetaUrl));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${importMetaUrl}`);
    dir = parent;
  }
  return dir;
}

/**
 * Applies a service's numbered .sql files (001_name.sql, …) that have not run yet, in one transaction,
 * under an advisory lock so that replicas starting together apply each file once.
 */
export async function migrate(sql: Sql, options: { schema: string; dir: string; log?: Logger }): Promise<number> {
  const files = readdirSync(options.dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .sort();
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext(${`migrate:${options.schema}`}))`;
    await tx.unsafe(`create schema if not exists ${options.schema}`);
    await tx.unsafe(`create table if not exists ${options.schema}.schema_migrations (
      version int primary key, name text not null, applied_at timestamptz not null default now())`);
    const applied = new Set(
      (await tx.unsafe(`select version from ${options.schema}.schema_migrations`)).map((r) => r.version as number),
    );
    let count = 0;
    for (const file of files) {
      const version = Number(file.split('_')[0]);
      if (applied.has(version)) continue;
      await tx.unsafe(readFileSync(join(options.dir, file), 'utf8'));
      await tx.unsafe(`insert into ${options.schema}.schema_migrations (version, name) values ($1, $2)`, [
        version,
        file,
      ]);
      options.log?.info({ schema: options.schema, migration: file }, 'migration applied');
      count++;
    }
    return count;
  });
}
