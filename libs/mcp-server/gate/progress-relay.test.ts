import { describe, expect, it } from 'vitest';
import { ProgressRelay } from './progress-relay.js';

describe('ProgressRelay', () => {
  it('reports the seconds waited, always growing', () => {
    const relay = new ProgressRelay();
    expect(relay.waited(1, 'tok', 0)).toBe(0);
    expect(relay.waited(1, 'tok', 0)).toBe(1);
    expect(relay.waited(1, 'tok', 4)).toBe(4);
    expect(relay.waited(1, 'tok', 4)).toBe(5);
  });

  it("shifts the server's progress past the gate's on the same token, total too", () => {
    const relay = new ProgressRelay();
    relay.waited(7, 'tok', 8);
    expect(relay.shift({ progressToken: 'tok', progress: 1, total: 4, message: 'm' })).toEqual({
      progressToken: 'tok',
      progress: 10,
      total: 13,
      message: 'm',
    });
    expect(relay.shift({ progressToken: 'tok', progress: 2 })).toEqual({ progressToken: 'tok', progress: 11 });
  });

  it('passes other tokens unchanged, and forgets a token once its call is answered', () => {
    const relay = new ProgressRelay();
    relay.waited('a', 5, 12);
    const other = { progressToken: 6, progress: 1, total: 2 };
    expect(relay.shift(other)).toBe(other);
    relay.done('a');
    const same = { progressToken: 5, progress: 1 };
    expect(relay.shift(same)).toBe(same);
    relay.done('never-held');
  });
});
