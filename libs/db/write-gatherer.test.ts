import { describe, expect, it } from 'vitest';
import { gatherWrites } from './write-gatherer.js';

/** A write whose statements the test finishes by hand, recording what each one held. */
function heldWrites(fail?: (items: number[]) => Error | undefined) {
  const statements: Array<{ items: number[]; finish: () => void }> = [];
  const write = (items: number[]) =>
    new Promise<string[]>((resolve, reject) => {
      statements.push({
        items,
        finish: () => {
          const err = fail?.(items);
          if (err) reject(err);
          else resolve(items.map((i) => `stored ${i}`));
        },
      });
    });
  return { statements, write };
}

const refused = new Error('refused');
const settled = () => new Promise((r) => setImmediate(r));

describe('gathering writes into statements', () => {
  it('sends a write at once when nothing is out, gathers those that come meanwhile, and adds a statement only for a full batch', async () => {
    const { statements, write } = heldWrites();
    const insert = gatherWrites({ write, inFlight: 2, maxBatch: 3, retryAlone: () => true });
    const early = [1, 2, 3].map(insert);
    await settled();
    // 2 and 3 wait for the statement out: two are not a full batch.
    expect(statements.map((s) => s.items)).toEqual([[1]]);
    const late = [4, 5, 6, 7, 8].map(insert);
    await settled();
    // With 4 a full batch waited: it went out beside the first; the second slot is now taken too.
    expect(statements.map((s) => s.items)).toEqual([[1], [2, 3, 4]]);
    statements[0]!.finish();
    await settled();
    expect(statements[2]!.items).toEqual([5, 6, 7]);
    statements[1]!.finish();
    statements[2]!.finish();
    await settled();
    // One statement is out for any number waiting.
    expect(statements[3]!.items).toEqual([8]);
    statements[3]!.finish();
    expect(await Promise.all([...early, ...late])).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((i) => `stored ${i}`));
  });

  it('sends a write that has waited overdueMs in a further statement, full batch or not', async () => {
    const { statements, write } = heldWrites();
    const insert = gatherWrites({ write, inFlight: 2, maxBatch: 10, overdueMs: 30, retryAlone: () => true });
    const answers = [1, 2, 3].map(insert);
    await settled();
    expect(statements.map((s) => s.items)).toEqual([[1]]);
    await new Promise((r) => setTimeout(r, 60));
    // The first statement is still out; 2 and 3 waited past 30 ms and took the second slot.
    expect(statements.map((s) => s.items)).toEqual([[1], [2, 3]]);
    const later = insert(4);
    await new Promise((r) => setTimeout(r, 60));
    // Both slots are taken: 4 waits, however long, for one of them.
    expect(statements).toHaveLength(2);
    statements[1]!.finish();
    await settled();
    expect(statements[2]!.items).toEqual([4]);
    statements[0]!.finish();
    statements[2]!.finish();
    expect(await Promise.all([...answers, later])).toEqual([1, 2, 3, 4].map((i) => `stored ${i}`));
  });

  it('puts only writes that may share a statement together', async () => {
    const { statements, write } = heldWrites();
    const insert = gatherWrites({
      write,
      inFlight: 1,
      maxBatch: 10,
      retryAlone: () => true,
      sameStatement: (a: number, b: number) => a % 2 === b % 2,
    });
    const answers = [1, 2, 3, 4, 5].map(insert);
    await settled();
    statements[0]!.finish();
    await settled();
    expect(statements[1]!.items).toEqual([2, 4]);
    statements[1]!.finish();
    await settled();
    expect(statements[2]!.items).toEqual([3, 5]);
    statements[2]!.finish();
    await Promise.all(answers);
  });

  it("tries a refused statement's writes one by one, so that only the bad write fails", async () => {
    const { statements, write } = heldWrites((items) => (items.includes(3) ? refused : undefined));
    const insert = gatherWrites({ write, inFlight: 1, maxBatch: 10, retryAlone: (err) => err === refused });
    const answers = [1, 2, 3, 4].map((i) => insert(i).catch((err: Error) => err.message));
    await settled();
    statements[0]!.finish();
    await settled();
    statements[1]!.finish(); // [2, 3, 4]: refused as a whole
    await settled();
    expect(statements.slice(2).map((s) => s.items)).toEqual([[2], [3], [4]]);
    for (const s of statements.slice(2)) s.finish();
    expect(await Promise.all(answers)).toEqual(['stored 1', 'stored 2', 'refused', 'stored 4']);
  });

  it('fails every write of a statement whose outcome is unknown, without trying them again', async () => {
    const lost = new Error('connection lost');
    const { statements, write } = heldWrites(() => lost);
    const insert = gatherWrites({ write, inFlight: 1, maxBatch: 10, retryAlone: (err) => err === refused });
    const answers = [1, 2, 3].map((i) => insert(i).catch((err: Error) => err.message));
    await settled();
    statements[0]!.finish();
    await settled();
    statements[1]!.finish();
    expect(await Promise.all(answers)).toEqual(['connection lost', 'connection lost', 'connection lost']);
    expect(statements).toHaveLength(2);
  });
});
