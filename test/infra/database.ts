import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { inject } from 'vitest';

/** A fresh database for one test file (dropped by the returned function), or the shared one on the embedded fallback. */
export async function createTestDatabase(): Promise<{ url: string; sql: postgres.Sql; drop(): Promise<void> }> {
  const { databaseUrl, isolatedDatabases } = inject('infra');
  if (!isolatedDatabases) {
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
