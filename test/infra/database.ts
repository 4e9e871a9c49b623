import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { inject } from 'vitest';

/** A fresh database for one test file (dropped by the returned function), or the shared one on the embedded fallback. */
export async function createTestDatabase(): Promise<{ url: string; sql: postgres.Sql; drop(): Promise<void> }> {
  const { databaseUrl, isolatedDatabases } = inject('infra');
  if (!isolatedDatabases) {
    await emptyEmbeddedDatabase(databaseUrl);
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    return { url: databaseUrl, sql, drop: () => sql.end() };
  }
  const name = `aa_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  const sql = postgres(url.toString(), { max: 2, onnotice: () => {} });
  return {
    url: url.toString(),
    sql,
    async drop() {
      await sql.end();
      await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
      await admin.end();
    },
  };
}

/**
 * On the embedded Postgres, which the test files share one after another (vitest.config.ts), each starts from an
 * empty database as it would from its own elsewhere: every schema the services' migrations (or a test) made is
 * dropped. Its connection is closed before the file starts a service, which needs the only one.
 */
async function emptyEmbeddedDatabase(url: string): Promise<void> {
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const schemas = await admin<Array<{ name: string }>>`
      select nspname as name from pg_namespace
      where nspname not like 'pg\_%' and nspname not in ('information_schema', 'public')`;
    for (const { name } of schemas) await admin.unsafe(`drop schema "${name}" cascade`);
  } finally {
    await admin.end();
  }
}
