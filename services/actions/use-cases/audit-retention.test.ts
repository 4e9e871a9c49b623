// The audit trail ages out with RETENTION_DAYS (migration 065): events written over several months, the oldest
// months cut with a signed checkpoint per account, and what is left verified with the client's own verifier.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAuditChain, type AuditCheckpoint } from '@agent-auth/client';
import { migrate, packageDir } from '@agent-auth/db';
import { createTestDatabase } from '../../../test/infra/database.js';
import { generateReceiptKeySpec, parseReceiptKeys } from '../domain/receipt-keys.js';
import { createAuditChainStore } from '../store/audit-chain.js';
import { createAuditCutStore } from '../store/audit-cuts.js';
import { createRequestStore } from '../store/requests.js';
import { createAuditChain } from './audit-chain.js';
import { createAuditRetention } from './audit-retention.js';

const DAY_MS = 86_400_000;
/** The first day of the UTC month `offset` months from this one. */
const monthStart = (offset: number) => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1));
};
const day = (at: Date) => at.toISOString().slice(0, 10);
const suffix = (offset: number) => `m${monthStart(offset).toISOString().slice(0, 7).replace('-', '_')}`;

describe('audit events age out at a signed checkpoint (real Postgres)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let reading: ReturnType<typeof createAuditChain>;
  let retention: ReturnType<typeof createAuditRetention>;
  let receiptKeys: Awaited<ReturnType<typeof parseReceiptKeys>>;

  /** Events of accounts at a time, in a transaction of their own (sealed in that order). */
  const write = (at: Date, accounts: string[]) =>
    db.sql`
      insert into actions.audit_events (id, account_id, event, actor, detail, at)
      select actions.audit_event_id_bound(${at}) + nextval('actions.audit_event_seq') % 1048576, a, 'created',
        'agent:agt_1', jsonb_build_object('n', ord), ${at}
      from unnest(${accounts}::text[]) with ordinality as x(a, ord)`;
  const read = async (account: string) => {
    const page = await reading.page(account, { after: 0, limit: 500 });
    return { page, head: await reading.head(account) };
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.sql as never, { schema: 'actions', dir: `${packageDir(import.meta.url)}/store/migrations` });
    // As if the tables had been partitioned five months ago: a partition per month since, older ids before.
    for (const table of ['audit_events', 'audit_chain']) {
      await db.sql.unsafe(`drop table actions.${table}_older`);
      await db.sql.unsafe(`create table actions.${table}_older partition of actions.${table}
        for values from (minvalue) to (${auditIdBound(monthStart(-5))})`);
      await db.sql`select actions.add_partitions(${table}, ${`actions.${table}`}, ${day(monthStart(-5))}::date,
        ${day(monthStart(-1))}::date)`;
    }
    receiptKeys = await parseReceiptKeys(generateReceiptKeySpec('r1'));
    const auditChain = createAuditChainStore(db.sql as never);
    const deps = { auditChain, receiptKeys, requests: createRequestStore(db.sql as never) };
    reading = createAuditChain(deps);
    retention = createAuditRetention({ ...deps, auditCuts: createAuditCutStore(db.sql as never) });
    // acc_a writes every month; acc_c only in the months that go; acc_b writes an event of the last month to go
    // after one of the next month (sealed in that order, so its place in the chain is later).
    for (let offset = -5; offset <= 0; offset++) {
      const at = new Date(monthStart(offset).getTime() + (offset === 0 ? 0 : 10 * DAY_MS));
      await write(at, offset <= -3 ? ['acc_a', 'acc_a', 'acc_c'] : ['acc_a']);
    }
    await write(new Date(monthStart(-2).getTime() + DAY_MS), ['acc_b']);
    await write(new Date(monthStart(-3).getTime() + 20 * DAY_MS), ['acc_b']);
    await write(new Date(monthStart(-1).getTime() + DAY_MS), ['acc_b']);
  });
  afterAll(async () => db?.drop());

  /** The whole chain of an account as it stands, with its signed head (sealing what is waiting first). */
  let before: Record<string, Awaited<ReturnType<typeof read>>> = {};

  it('keeps every event until a month is past the retention, and verifies from seq 1 meanwhile', async () => {
    before = { acc_a: await read('acc_a'), acc_b: await read('acc_b'), acc_c: await read('acc_c') };
    expect(before.acc_a!.page.events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(before.acc_a!.page.checkpoint).toBeUndefined();
    const jwks = receiptKeys.jwks();
    for (const { page, head } of Object.values(before))
      expect(await verifyAuditChain(page.events, head, jwks)).toMatchObject({ head_seq: page.events.length });
    // A retention longer than everything stored cuts nothing.
    expect(await retention.cutOlderThan(365)).toEqual({ dropped: [], checkpoints: 0, held: [] });
  });

  it('drops whole months with a checkpoint per account; what is left verifies from it, and a changed one does not', async () => {
    const days = Math.floor((Date.now() - monthStart(-2).getTime()) / DAY_MS);
    const cut = await retention.cutOlderThan(days);
    expect(cut).toEqual({ dropped: ['older', suffix(-5), suffix(-4), suffix(-3)], checkpoints: 2 + 2 + 3, held: [] });
    const [{ n }] = await db.sql<[{ n: number }]>`
      select count(*)::int as n from actions.audit_events where at < ${monthStart(-2)}`;
    expect(n).toBe(0);
    const jwks = receiptKeys.jwks();

    // acc_a: six of its nine events went; the rest starts at seq 7 from the checkpoint at its sixth.
    const a = await read('acc_a');
    const lastDropped = before.acc_a!.page.events[5]!;
    expect(a.page.checkpoint).toMatchObject({ seq: 6, hash: lastDropped.hash, at: lastDropped.at });
    expect(a.page.events.map((e) => e.seq)).toEqual([7, 8, 9]);
    const { signature: _fresh, ...headBefore } = before.acc_a!.head;
    expect(a.head).toMatchObject(headBefore); // ES256 signatures differ each time
    const checkpoint = a.page.checkpoint!;
    expect(await verifyAuditChain(a.page.events, a.head, jwks, { checkpoint })).toEqual({
      account_id: 'acc_a',
      head_seq: 9,
      head_hash: before.acc_a!.head.hash,
      events: 3,
      checkpoint_seq: 6,
    });
    // A later page carries no checkpoint; the first one does, whatever `after` below the cut asked for.
    expect((await reading.page('acc_a', { after: 7, limit: 10 })).checkpoint).toBeUndefined();
    expect((await reading.page('acc_a', { after: 2, limit: 1 })).checkpoint).toEqual(checkpoint);

    const tampered: Array<[string, AuditCheckpoint, RegExp]> = [
      ['its hash', { ...checkpoint, hash: before.acc_a!.page.events[4]!.hash }, /differs from what its signature/],
      ['its seq', { ...checkpoint, seq: 5 }, /differs from what its signature/],
      ['its signature', { ...checkpoint, signature: `${checkpoint.signature.slice(0, -4)}AAAA` }, /does not verify/],
    ];
    for (const [what, changed, message] of tampered) {
      await expect(verifyAuditChain(a.page.events, a.head, jwks, { checkpoint: changed }), what).rejects.toThrow(
        message,
      );
    }
    // Another account's checkpoint does not start this chain.
    const other = (await read('acc_b')).page.checkpoint!;
    await expect(verifyAuditChain(a.page.events, a.head, jwks, { checkpoint: other })).rejects.toThrow(
      /signed for account acc_b/,
    );
    // An event dropped from what is left breaks it, as it always did.
    await expect(verifyAuditChain(a.page.events.slice(1), a.head, jwks, { checkpoint })).rejects.toMatchObject({
      seq: 7,
    });
  });

  it('starts after the checkpoint even where a kept month holds an event with an earlier place', async () => {
    // acc_b's event of month -2 was sealed before its event of month -3: seq 1 kept, seq 2 dropped, seq 3 kept.
    const b = await read('acc_b');
    expect(b.page.checkpoint).toMatchObject({ seq: 2, hash: before.acc_b!.page.events[1]!.hash });
    expect(b.page.events.map((e) => e.seq)).toEqual([3]);
    expect(
      await verifyAuditChain(b.page.events, b.head, receiptKeys.jwks(), { checkpoint: b.page.checkpoint }),
    ).toMatchObject({
      head_seq: 3,
      checkpoint_seq: 2,
    });
  });

  it('an account with every event dropped keeps its head at the checkpoint, and its next event chains after it', async () => {
    const c = await read('acc_c');
    expect(c.page.events).toEqual([]);
    expect(c.page.checkpoint).toMatchObject({ seq: 3, hash: before.acc_c!.head.hash });
    expect(c.head).toMatchObject({ seq: 3, hash: before.acc_c!.head.hash, at: before.acc_c!.head.at });
    const jwks = receiptKeys.jwks();
    expect(await verifyAuditChain([], c.head, jwks, { checkpoint: c.page.checkpoint })).toMatchObject({ head_seq: 3 });

    await write(new Date(), ['acc_c']);
    const after = await read('acc_c');
    expect(after.page.events.map((e) => [e.seq, e.prev_hash])).toEqual([[4, before.acc_c!.head.hash]]);
    expect(
      await verifyAuditChain(after.page.events, after.head, jwks, { checkpoint: after.page.checkpoint }),
    ).toMatchObject({
      head_seq: 4,
      checkpoint_seq: 3,
    });
  });

  it('cuts nothing twice, and holds a month back while an event of it is not sealed', async () => {
    const days = Math.floor((Date.now() - monthStart(-2).getTime()) / DAY_MS);
    expect(await retention.cutOlderThan(days)).toEqual({ dropped: [], checkpoints: 0, held: [] });
    await write(new Date(monthStart(-2).getTime() + 2 * DAY_MS), ['acc_a']);
    const cuts = createAuditCutStore(db.sql as never);
    expect(await cuts.cut(suffix(-2), (head) => receiptKeys.signCheckpoint(head))).toEqual({ held: 'unsealed events' });
    expect((await db.sql`select to_regclass(${`actions.audit_events_${suffix(-2)}`}) as t`)[0]!.t).not.toBeNull();
  });
});

/** The smallest audit event id of a time, as SQL text (the partitions' bounds). */
function auditIdBound(at: Date): string {
  return (BigInt(at.getTime()) * 1_048_576n).toString();
}
