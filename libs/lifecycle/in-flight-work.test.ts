import { describe, expect, it } from 'vitest';
import { inFlightWork } from './in-flight-work.js';

const later = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

describe('inFlightWork', () => {
  it('settles at once when nothing is tracked', async () => {
    await expect(inFlightWork().settled()).resolves.toBeUndefined();
  });

  it('waits for tracked work, failed work included, and for work tracked while it waits', async () => {
    const work = inFlightWork();
    const done: string[] = [];
    work.track(later(20, 'a').then((v) => done.push(v)));
    work.track(later(5, 'x').then(() => Promise.reject(new Error('failed in the background'))));
    setTimeout(() => work.track(later(30, 'b').then((v) => done.push(v))), 10);
    await work.settled();
    expect(done).toEqual(['a', 'b']);
  });
});
