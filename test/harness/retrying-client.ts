import { setTimeout as sleep } from 'node:timers/promises';

/** One HTTP call as the client saw it: a status, or how the connection failed (status 0). */
export interface Attempt {
  status: number;
  /** The error `code` of a 4xx/5xx answer, or the network error's. */
  code?: string;
  ms: number;
}

/** A call made to the end: every attempt, the last status, the answer's body, and how long it all took. */
export interface Call {
  attempts: Attempt[];
  status: number;
  body: Record<string, unknown>;
  startedAt: number;
  finishedAt: number;
}

/**
 * An HTTP call as an agent's client library makes it: on a 502/503/504 or a network error it tries again with
 * backoff (the caller sends the same Idempotency-Key each time), moving to the next of `bases` (the several addresses
 * of a load balancer) after a network error. Gives up after `tries` attempts.
 */
export async function callWithRetries(
  bases: string[],
  request: (base: string) => Promise<Response>,
  tries = 20,
): Promise<Call> {
  const startedAt = Date.now();
  const attempts: Attempt[] = [];
  let at = Math.floor(Math.random() * bases.length);
  for (let attempt = 0; attempt < tries; attempt++) {
    const base = bases[at % bases.length]!;
    const began = Date.now();
    try {
      const res = await request(base);
      const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
      const code = typeof body.code === 'string' ? body.code : undefined;
      attempts.push({ status: res.status, code, ms: Date.now() - began });
      if (res.status < 500) return { attempts, status: res.status, body, startedAt, finishedAt: Date.now() };
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause;
      attempts.push({ status: 0, code: cause?.code ?? (err as Error).name, ms: Date.now() - began });
      at++;
    }
    await sleep(Math.min(2000, 100 * 2 ** attempt));
  }
  return { attempts, status: attempts.at(-1)?.status ?? 0, body: {}, startedAt, finishedAt: Date.now() };
}
