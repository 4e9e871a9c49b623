/** What one attempt produced: a status code, or no response and why. */
export type AttemptResult = { status: number; error: null } | { status: null; error: string };

export type NextStep =
  | { outcome: 'delivered' }
  | { outcome: 'failed'; reason: string }
  | { outcome: 'retrying'; at: Date };

/** Spreads a delay over ±10 % so receivers recovering from an outage are not hit by every retry at once. */
export function withJitter(seconds: number, random: () => number): number {
  return seconds * (0.9 + 0.2 * random());
}

/**
 * After attempt number `attemptsDone`: a 2xx is delivered; 410 Gone means the receiver wants no more; anything
 * else (other status, redirect, no response) is retried `schedule[attemptsDone - 1]` seconds (with jitter) after
 * this attempt, until the schedule is used up.
 */
export function nextStep(
  result: AttemptResult,
  attemptsDone: number,
  schedule: readonly number[],
  now: Date,
  random: () => number = Math.random,
): NextStep {
  if (result.status !== null && result.status >= 200 && result.status < 300) return { outcome: 'delivered' };
  if (result.status === 410) return { outcome: 'failed', reason: 'the receiver answered 410 Gone' };
  const delay = schedule[attemptsDone - 1];
  if (delay === undefined) return { outcome: 'failed', reason: `no answer with 2xx after ${attemptsDone} attempts` };
  return { outcome: 'retrying', at: new Date(now.getTime() + Math.round(withJitter(delay, random) * 1000)) };
}

/** The longest total time the schedule keeps retrying, in seconds (before jitter). */
export function retryHorizonSeconds(schedule: readonly number[]): number {
  return schedule.reduce((sum, s) => sum + s, 0);
}
