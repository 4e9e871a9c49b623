import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../../test/infra/database.js';

const { isolatedDatabases } = inject('infra');
const oneSession = isolatedDatabases ? '' : 'embedded Postgres serves one session at a time';
const ROOT = resolve(import.meta.dirname, '../..');

// Run in a process of its own: what is checked is that the process survives. The transaction's backend is terminated
// while it runs a statement; postgres.js then writes the transaction's ROLLBACK on the connection that has just lost
// its socket, deferred to the next turn of the event loop (patches/postgres+3.4.9+001+settle-on-write-after-close.patch).
const script = `
import { connectDatabase } from ${JSON.stringify(resolve(ROOT, 'libs/db/connect.ts'))};
const sql = connectDatabase(process.env.DATABASE_URL, { max: 2 });
const killer = connectDatabase(process.env.DATABASE_URL, { max: 1 });
let pid;
// Its failure is taken at once: the transaction can fail before the killer's own answer arrives.
const transaction = sql.begin(async (t) => {
  [{ pid }] = await t\`select pg_backend_pid() as pid\`;
  await t\`select pg_sleep(5)\`;
}).then(() => null, (err) => err);
while (!pid) await new Promise((r) => setTimeout(r, 10));
await killer\`select pg_terminate_backend(\${pid})\`;
const failure = await transaction;
await new Promise((r) => setTimeout(r, 200));
let answer;
for (let i = 0; i < 5 && answer === undefined; i++) answer = await sql\`select 1 as one\`.then((rows) => rows[0].one, () => undefined);
const started = performance.now();
await sql.end({ timeout: 20 });
const endMs = performance.now() - started;
await killer.end();
console.log(JSON.stringify({ code: failure?.code, answer, endMs }));
`;

describe('a pooled connection whose backend goes away in a transaction', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it.skipIf(oneSession)(
    `fails the transaction with CONNECTION_CLOSED, leaves the process running, the pool usable and quick to close${oneSession ? ` (skipped: ${oneSession})` : ''}`,
    () => {
      const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: db.url },
        encoding: 'utf8',
        timeout: 50_000,
      });
      expect(child.stderr).not.toMatch(/TypeError/);
      expect(child.status, child.stderr).toBe(0);
      const seen = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as {
        code: string;
        answer: number;
        endMs: number;
      };
      expect(seen.code).toBe('CONNECTION_CLOSED');
      expect(seen.answer).toBe(1);
      // The write that failed leaves no statement behind that closing the pool would wait for.
      expect(seen.endMs).toBeLessThan(5000);
    },
    60_000,
  );
});
