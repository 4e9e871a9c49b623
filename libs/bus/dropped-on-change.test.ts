import { describe, expect, it } from 'vitest';
import { createDroppedOnChange } from './dropped-on-change.js';

describe('copies dropped on change', () => {
  it('keeps a value until its original changes', () => {
    const copies = createDroppedOnChange<number>({ ttlMs: 60_000, maxEntries: 10 });
    copies.keep('a', 1, copies.ticket());
    expect(copies.get('a')).toBe(1);
    copies.drop('a');
    expect(copies.get('a')).toBeUndefined();
  });

  it('refuses a value read before a change heard after it, whichever key changed', () => {
    const copies = createDroppedOnChange<number>({ ttlMs: 60_000, maxEntries: 10 });
    const ticket = copies.ticket();
    copies.drop('b');
    copies.keep('a', 1, ticket);
    expect(copies.get('a')).toBeUndefined();
    copies.keep('a', 2, copies.ticket());
    expect(copies.get('a')).toBe(2);
  });

  it('expires a value `ttlMs` after the time it was kept at', () => {
    let clock = 100;
    const copies = createDroppedOnChange<number>({ ttlMs: 1_000, maxEntries: 10, now: () => clock });
    copies.keep('a', 1, copies.ticket(), 50);
    expect(copies.keptAt('a')).toBe(50);
    clock = 1_049;
    expect(copies.get('a')).toBe(1);
    clock = 1_050;
    expect(copies.get('a')).toBeUndefined();
  });

  it('keeps at most maxEntries, dropping the one kept longest ago', () => {
    const copies = createDroppedOnChange<number>({ ttlMs: 60_000, maxEntries: 2 });
    for (const [i, key] of ['a', 'b', 'c'].entries()) copies.keep(key, i, copies.ticket());
    expect(copies.size).toBe(2);
    expect([copies.get('a'), copies.get('b'), copies.get('c')]).toEqual([undefined, 1, 2]);
  });

  it('shares one read among callers that miss together, and a change makes later callers read afresh', async () => {
    const copies = createDroppedOnChange<number>({ ttlMs: 60_000, maxEntries: 10 });
    const releases: Array<() => void> = [];
    let reads = 0;
    const read = async () => {
      const n = ++reads;
      await new Promise<void>((r) => releases.push(r));
      return n;
    };
    const together = [copies.readOnce('a', read), copies.readOnce('a', read)];
    copies.dropWhere((value) => value === 99); // a change elsewhere, heard while the read is under way
    const after = copies.readOnce('a', read);
    for (const release of releases.splice(0)) release();
    expect(await Promise.all([...together, after])).toEqual([1, 1, 2]);
    expect(copies.get('a')).toBe(2); // only the read begun after the change is kept
  });

  it('drops the kept values a change matches', () => {
    const copies = createDroppedOnChange<number>({ ttlMs: 60_000, maxEntries: 10 });
    for (const [i, key] of ['a', 'b', 'c'].entries()) copies.keep(key, i, copies.ticket());
    copies.dropWhere((value) => value !== 1);
    expect([copies.get('a'), copies.get('b'), copies.get('c')]).toEqual([undefined, 1, undefined]);
  });

  it('renews an old value in the background, once, while it still answers; a failed renewal lets it expire', async () => {
    let clock = 0;
    const copies = createDroppedOnChange<number>({
      ttlMs: 1_000,
      maxEntries: 10,
      refreshAfterMs: 750,
      now: () => clock,
    });
    copies.keep('a', 1, copies.ticket());
    let reads = 0;
    const releases: Array<(value: number) => void> = [];
    const read = () => {
      reads++;
      return new Promise<number>((r) => releases.push(r));
    };
    clock = 749;
    expect(copies.getRenewing('a', read)).toBe(1);
    expect(reads).toBe(0); // young: no renewal
    clock = 750;
    expect([copies.getRenewing('a', read), copies.getRenewing('a', read)]).toEqual([1, 1]);
    expect(reads).toBe(1); // one renewal for every caller, none of them waiting for it
    releases.shift()!(2);
    await new Promise((r) => setImmediate(r));
    clock = 1_400; // past the old value's time-to-live, within the renewed one's (kept from when its read began)
    expect(copies.getRenewing('a', read)).toBe(2);
    expect(reads).toBe(1);
    const failing = () => {
      reads++;
      return Promise.reject(new Error('gone'));
    };
    clock = 1_600;
    expect(copies.getRenewing('a', failing)).toBe(2);
    await new Promise((r) => setImmediate(r));
    clock = 1_749;
    expect(copies.get('a')).toBe(2);
    clock = 1_750; // the failed renewal extended nothing
    expect(copies.getRenewing('a', read)).toBeUndefined();
    expect(reads).toBe(2);
  });
});
