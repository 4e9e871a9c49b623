import { describe, expect, it } from 'vitest';
import { startWakeLoop } from './wake-loop.js';

const until = async (check: () => boolean) => {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
};

describe('the wake loop', () => {
  it('runs a pass at once, again when woken, and one pass at a time', async () => {
    let passes = 0;
    let running = 0;
    let overlapped = false;
    const loop = startWakeLoop({
      pollMs: 60_000,
      pass: async () => {
        running++;
        overlapped ||= running > 1;
        passes++;
        await new Promise((r) => setTimeout(r, 10));
        running--;
      },
      onError: () => {},
    });
    await until(() => passes === 1);
    loop.wake();
    loop.wake();
    await until(() => passes >= 2);
    await loop.stop();
    expect(overlapped).toBe(false);
    expect(loop.stopped).toBe(true);
  });

  it('polls when nobody wakes it, reports a failing pass and goes on', async () => {
    let passes = 0;
    const errors: unknown[] = [];
    const loop = startWakeLoop({
      pollMs: 10,
      startAwake: false,
      pass: async () => {
        passes++;
        if (passes === 1) throw new Error('first pass fails');
      },
      onError: (err) => errors.push(err),
    });
    await until(() => passes >= 3);
    await loop.stop();
    expect(errors).toHaveLength(1);
  });
});
