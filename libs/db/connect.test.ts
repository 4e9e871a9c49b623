import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../../test/infra/database.js';
import { connectDatabase, isStatementRefused, type Sql } from './connect.js';

const { isolatedDatabases } = inject('infra');
// Embedded PGlite serves one session at a time and takes no cancel requests.
const noCancel = isolatedDatabases ? '' : 'embedded Postgres takes no cancel requests';
const oneSession = isolatedDatabases ? '' : 'embedded Postgres serves one session at a time';

describe('queries of the connection pool', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let sql: Sql;
  beforeAll(async () => {
    db = await createTestDatabase();
    sql = connectDatabase(db.url, { max: 2 });
  });
  afterAll(async () => {
    await sql.end();
    await db.drop();
  });

  it('are no longer active once answered', async () => {
    const query = sql<{ one: number }[]>`select 1 as one`;
    expect([...(await query)]).toEqual([{ one: 1 }]);
    expect((query as unknown as { active: boolean }).active).toBe(false);
  });

  it('reject a statement the server refuses, as refused', async () => {
    const err = await sql`select no_such_column from (select 1) t`.catch((e: unknown) => e);
    expect(isStatementRefused(err)).toBe(true);
    expect(String(err)).toMatch(/no_such_column/);
  });

  // postgres.js as patches/ leave it: a query goes to the idle connection used last (a warm backend).
  it.skipIf(oneSession)(
    `go one at a time to the connection used last, and spread over the pool when they overlap${oneSession ? ` (skipped: ${oneSession})` : ''}`,
    async () => {
      const pool = connectDatabase(db.url, { max: 3 });
      const backend = async () => (await pool<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid;
      try {
        const overlapping = await Promise.all(
          [1, 2, 3].map(
            async () => (await pool<{ pid: number }[]>`select pg_backend_pid() as pid, pg_sleep(0.05)`)[0]!.pid,
          ),
        );
        expect(new Set(overlapping).size).toBe(3);
        const oneAtATime: number[] = [];
        for (let i = 0; i < 6; i++) oneAtATime.push(await backend());
        expect(new Set(oneAtATime).size).toBe(1); // a warm backend, not each of the three in turn
      } finally {
        await pool.end();
      }
    },
  );

  it.skipIf(noCancel)(`cancel a running statement${noCancel ? ` (skipped: ${noCancel})` : ''}`, async () => {
    const running = sql`select pg_sleep(30)`.execute();
    await new Promise((r) => setTimeout(r, 300)); // under way on the server
    expect((running as unknown as { active: boolean }).active).toBe(true);
    running.cancel();
    await expect(running).rejects.toMatchObject({ code: '57014' });
    // The server signals a cancelled backend twice (its pid, then its process group). On a loaded machine the second
    // signal can come after the first has ended the statement, and cancel the next one: one such late cancel is allowed.
    const next = () => sql<{ two: number }[]>`select 2 as two`.then((rows) => [...rows]);
    const first = await next().catch((e: unknown) => e);
    const rows = (first as { code?: string }).code === '57014' ? await next() : first;
    expect(rows).toEqual([{ two: 2 }]);
  });
});
