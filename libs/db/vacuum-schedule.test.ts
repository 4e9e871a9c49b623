import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { createTestDatabase } from '../../test/infra/database.js';
import { connectDatabase, type Sql } from './connect.js';
import { vacuumAfterDeletes } from './vacuum-schedule.js';

const log = pino({ level: 'silent' });

describe('vacuuming a table after deletes (real Postgres)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let sql: Sql;
  beforeAll(async () => {
    db = await createTestDatabase();
    sql = connectDatabase(db.url, { max: 2 });
    await sql`create schema if not exists upkeep`;
    await sql`create table upkeep.queue (id serial primary key, body text not null)`;
  });
  afterAll(async () => {
    await sql.end();
    await db.drop();
  });

  const vacuums = async () =>
    Number(
      (
        await sql`select coalesce(vacuum_count, 0) as n from pg_stat_user_tables
        where schemaname = 'upkeep' and relname = 'queue'`
      )[0]?.n ?? 0,
    );
  const size = async () => Number((await sql`select pg_relation_size('upkeep.queue') as n`)[0]!.n);
  // Rows of a queue: inserted, then deleted once done with.
  const churn = async (rows: number) => {
    await sql`insert into upkeep.queue (body) select repeat('x', 400) from generate_series(1, ${rows})`;
    return (await sql`delete from upkeep.queue returning id`).length;
  };

  it('vacuums once enough rows were deleted, not before, and the space of the deleted rows is reused', async () => {
    const schedule = vacuumAfterDeletes({ sql, table: 'upkeep.queue', everyRows: 1500, log });
    const before = await vacuums();
    schedule.deleted(await churn(1000));
    await schedule.settled();
    expect(await vacuums()).toBe(before);
    const grown = await size(); // 1,000 deleted rows' worth, kept
    await sql`insert into upkeep.queue (body) select repeat('x', 400) from generate_series(1, 1000)`;
    const deleted = (await sql`delete from upkeep.queue returning id`).length;
    expect(await size()).toBeGreaterThan(grown); // not reused without a vacuum: the table grew
    const unvacuumed = await size();
    schedule.deleted(deleted);
    await schedule.settled();
    expect(await vacuums()).toBe(before + 1);
    // Not cut back (no truncation: its lock would hold up the inserts), but filled again without growing.
    expect(await size()).toBe(unvacuumed);
    await sql`insert into upkeep.queue (body) select repeat('x', 400) from generate_series(1, 1000)`;
    expect(await size()).toBe(unvacuumed);
  });

  it('refuses a name that is not a schema-qualified table', () => {
    expect(() => vacuumAfterDeletes({ sql, table: 'upkeep.queue; drop table x', everyRows: 1, log })).toThrow(
      /schema-qualified/,
    );
  });

  it('survives a failed vacuum and tries again after the next deletes', async () => {
    const schedule = vacuumAfterDeletes({ sql, table: 'upkeep.missing', everyRows: 1, log });
    schedule.deleted(5);
    await expect(schedule.settled()).resolves.toBeUndefined();
    await sql`create table upkeep.missing (id int)`;
    schedule.deleted(1);
    await schedule.settled();
    await expect
      .poll(async () =>
        Number(
          (
            await sql`select coalesce(vacuum_count, 0) as n from pg_stat_user_tables
              where schemaname = 'upkeep' and relname = 'missing'`
          )[0]?.n ?? 0,
        ),
      )
      .toBe(1);
  });
});
