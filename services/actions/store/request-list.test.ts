// GET /actions on the requests table partitioned by month: the newest month first, older ones only while a page is
// not full, and a cursor that goes on across a partition's boundary without skipping or repeating a row. Checked
// against every row sorted as a list promises, on a layout with empty months, a month ahead, a gap, and the ids of
// before ids began with their time; then on the same rows in one table (one query, in creation order).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, packageDir } from '@agent-auth/db';
import { createTestDatabase } from '../../../test/infra/database.js';
import { idBoundAt } from '../domain/list-segments.js';
import { type AgentListFilter, createAgentListWalk } from './request-list.js';

const DAY_MS = 86_400_000;
const monthStart = (offset: number) => {
  const now = new Date();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1);
};
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface Stored {
  id: string;
  at: number;
  status?: string;
  type?: string;
  agent?: string;
}

/** Requests per month offset (-6 … +1): none in -5, -4 and -2; one ahead (a writer's clock ahead of the others). */
function requests(): Stored[] {
  const rows: Stored[] = [];
  const counts: Record<number, number> = { [-6]: 3, [-3]: 4, [-1]: 2, 0: 3, 1: 1 };
  let n = 0;
  for (const [offset, count] of Object.entries(counts)) {
    for (let i = 0; i < count; i++) {
      // Two of month -3's share their creation time: the id orders them.
      const at = monthStart(Number(offset)) + (Number(offset) === -3 && i === 1 ? 2 : i + 1) * DAY_MS;
      const id = `${idBoundAt(at)}${String(++n).padStart(11, '0')}`;
      rows.push({ id, at, status: ['approved', 'denied', 'expired'][n % 3], type: n % 2 ? 'legal' : 'purchase' });
    }
  }
  // Made before ids began with their time (older than every month): in the partition of older ids, and the default.
  rows.push({ id: 'act_0aLegacyRandomId01', at: monthStart(-9), status: 'denied', type: 'legal' });
  rows.push({ id: `${idBoundAt(monthStart(-8))}00000000099`, at: monthStart(-8), status: 'approved', type: 'legal' });
  rows.push({ id: 'act_LegacyRandomId0001', at: monthStart(-12), status: 'denied', type: 'purchase' });
  rows.push({ id: 'act_zLegacyRandomId002', at: monthStart(-11), status: 'approved', type: 'legal' });
  // Another agent's, in the same months.
  rows.push({ id: `${idBoundAt(monthStart(0) + DAY_MS)}99999999999`, at: monthStart(0) + DAY_MS, agent: 'agt_other' });
  return rows;
}

describe('an agent’s list walks the months newest first (real Postgres)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  const pendingNow = `${idBoundAt(Date.now() - 60_000)}pendingnow1`;
  const pendingStale = `${idBoundAt(monthStart(-3) + 5 * DAY_MS)}pendingold1`;

  /**
   * Every row the filter takes, in the order a list promises: newest first within the month its id was made, this
   * month, then the months ahead, then each earlier month, then the ids outside every month.
   */
  const expected = async (filter: Omit<AgentListFilter, 'limit'>) => {
    const rows = await db.sql<Array<{ id: string; created_at: Date }>>`
      select id, created_at from actions.requests where agent_id = 'agt_w'
        ${filter.status ? db.sql`and status = ${filter.status}` : db.sql``}
        ${filter.action_type ? db.sql`and action_type = ${filter.action_type}` : db.sql``}`;
    const rank = (id: string) => {
      if (!/^act_[0-9a-z]{9}/.test(id)) return 100;
      const month = [2, 1, 0, -1, -2, -3, -4, -5, -6, -7].find((k) => id >= idBoundAt(monthStart(k)));
      if (month === undefined || id >= idBoundAt(monthStart(3))) return 100;
      return month === 0 ? 0 : month > 0 ? 1 : 2 - month;
    };
    return rows
      .sort(
        (a, b) =>
          rank(a.id) - rank(b.id) ||
          b.created_at.getTime() - a.created_at.getTime() ||
          (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
      )
      .map((r) => r.id);
  };

  /** Every page of the list, `limit` at a time, each after the previous page's last row. */
  const walk = async (filter: Omit<AgentListFilter, 'limit' | 'after'>, limit: number) => {
    const list = createAgentListWalk(db.sql as never);
    const pages: string[][] = [];
    for (let after: AgentListFilter['after']; pages.length < 100; ) {
      const page = await list('agt_w', { ...filter, limit, after });
      pages.push(page.map((r) => r.id));
      if (page.length < limit) break;
      after = { created_at: page.at(-1)!.position, id: page.at(-1)!.id };
    }
    return pages;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.sql as never, { schema: 'actions', dir: `${packageDir(import.meta.url)}/store/migrations` });
    // As if partitioned seven months ago, with month -5's partition dropped by hand: its ids go to the default one.
    await db.sql`drop table actions.requests_older`;
    await db.sql.unsafe(`create table actions.requests_older partition of actions.requests
      for values from (minvalue) to ('${idBoundAt(monthStart(-7))}')`);
    await db.sql`select actions.add_partitions('requests', 'actions.requests', ${day(monthStart(-7))}::date, ${day(monthStart(-1))}::date)`;
    await db.sql.unsafe(`drop table actions.requests_m${day(monthStart(-5)).slice(0, 7).replace('-', '_')}`);
    const rows = requests();
    await db.sql`
      insert into actions.requests (id, account_id, agent_id, action_type, title, risk_level, risk_rank, reversible,
        currency, status, created_at, expires_at)
      select id, 'acc_w', agent, type, 'r', 'low', 0, true, 'USD', status, at, at + interval '5 minutes'
      from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.agent ?? 'agt_w')}::text[],
        ${rows.map((r) => r.type ?? 'purchase')}::text[], ${rows.map((r) => r.status ?? 'approved')}::text[],
        ${rows.map((r) => new Date(r.at).toISOString())}::timestamptz[]) as x(id, agent, type, status, at)`;
    // One pending now, and one left pending long ago (overdue: a read shows it expired).
    await db.sql`
      insert into actions.requests (id, account_id, agent_id, action_type, title, risk_level, risk_rank, reversible,
        currency, status, created_at, expires_at)
      values (${pendingNow}, 'acc_w', 'agt_w', 'purchase', 'p', 'low', 0, true, 'USD', 'pending', now() - interval '1 minute', now() + interval '1 hour'),
        (${pendingStale}, 'acc_w', 'agt_w', 'purchase', 'p', 'low', 0, true, 'USD', 'pending', ${new Date(monthStart(-3) + 5 * DAY_MS)}, ${new Date(monthStart(-3) + 6 * DAY_MS)})`;
    const placed = await db.sql<Array<{ part: string }>>`
      select distinct tableoid::regclass::text as part from actions.requests where id like 'act_%Legacy%'`;
    expect(placed.map((p) => p.part).sort()).toEqual(['actions.requests_default', 'actions.requests_older']);
  });
  afterAll(async () => db?.drop());

  const filters: Array<Omit<AgentListFilter, 'limit'>> = [
    {},
    { status: 'denied' },
    { action_type: 'legal' },
    { status: 'approved', action_type: 'legal' },
  ];

  it('pages through every row once, in order, at every page size and filter', async () => {
    for (const filter of filters) {
      const all = await expected(filter);
      expect(all.length).toBeGreaterThan(3);
      for (const limit of [1, 2, 3, 4, 5, 7, 50]) {
        const pages = await walk(filter, limit);
        expect(pages.flat(), `${JSON.stringify(filter)} by ${limit}`).toEqual(all);
        expect(pages.slice(0, -1).every((p) => p.length === limit)).toBe(true);
      }
    }
  });

  it('ends a page exactly at a month’s last row, and the next one starts at the next segment holding any', async () => {
    // This month holds 3 of the agent's rows and the pending one: a page of 4 ends there.
    const [first, second] = await walk({}, 4);
    const all = await expected({});
    expect(first).toEqual(all.slice(0, 4));
    for (const id of first!) expect(id >= idBoundAt(monthStart(0)) && id < idBoundAt(monthStart(1))).toBe(true);
    // The next page: the month ahead's one row, then month -1's (month -2 is empty), then month -3's.
    expect(second![0]! >= idBoundAt(monthStart(1))).toBe(true);
    expect(second![1]! >= idBoundAt(monthStart(-1)) && second![1]! < idBoundAt(monthStart(0))).toBe(true);
    expect(second).toEqual(all.slice(4, 8));
  });

  it('reads the pending ones of the last days only: one left pending months ago is not read', async () => {
    expect(await expected({ status: 'pending' })).toEqual([pendingNow, pendingStale]);
    expect((await walk({ status: 'pending' }, 10)).flat()).toEqual([pendingNow]);
  });

  it('on the same rows in one table, lists them newest first', async () => {
    const inCreationOrder = async (filter: Omit<AgentListFilter, 'limit'>) =>
      (
        await db.sql<Array<{ id: string }>>`
          select id from actions.requests where agent_id = 'agt_w'
            ${filter.status ? db.sql`and status = ${filter.status}` : db.sql``}
            ${filter.action_type ? db.sql`and action_type = ${filter.action_type}` : db.sql``}
          order by created_at desc, id desc`
      ).map((r) => r.id);
    const all = Object.fromEntries(
      await Promise.all(filters.map(async (f) => [JSON.stringify(f), await inCreationOrder(f)])),
    );
    await db.sql.begin(async (tx) => {
      await tx`create table actions.requests_flat (like actions.requests including all)`;
      await tx`insert into actions.requests_flat select * from actions.requests`;
      await tx`drop table actions.requests`;
      await tx`alter table actions.requests_flat rename to requests`;
    });
    for (const filter of filters)
      for (const limit of [1, 3, 50]) expect((await walk(filter, limit)).flat()).toEqual(all[JSON.stringify(filter)]);
    expect((await walk({ status: 'pending' }, 10)).flat()).toEqual([pendingNow]);
  });
});
