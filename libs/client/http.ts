// The one place that talks HTTP: JSON in and out, typed errors, bounded retry on 429 and on transient failures.
import { errorFor, parseRetryAfter } from './errors.js';

export interface TransportOptions {
  baseUrl: string;
  headers: Record<string, string>;
  fetch: typeof fetch;
  /** Retries after a 429 before RateLimitedError is thrown. */
  maxRetries: number;
  /** Upper bound of one Retry-After wait, so a misbehaving proxy cannot park the agent for hours. */
  maxRetryDelayMs: number;
}

/** Resolves after ms, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Per-call additions: extra headers, and whether a transient failure may be retried. */
export interface SendExtras {
  headers?: Record<string, string>;
  /**
   * Retry 502, 503, 504 and network errors with backoff: for reads, and for a create carrying an Idempotency-Key
   * (a retry then gets the first answer, never a second request). Default: GET only.
   */
  retryTransient?: boolean;
}

const TRANSIENT = new Set([502, 503, 504]);

/** Backoff before retry n (0-based) of a transient failure: 250 ms doubling, ±50 % jitter so retries spread out. */
export function transientDelayMs(n: number): number {
  return Math.round(250 * 2 ** n * (0.5 + Math.random()));
}

/**
 * An answer's body: parsed when it is JSON (read as JSON, so that a fetch that already holds the value hands it over
 * as it is), else its text, kept for the error; undefined when empty.
 */
async function bodyOf(res: Response): Promise<unknown> {
  if (res.headers.get('content-type')?.includes('json')) return res.json().catch(() => undefined);
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text; // not JSON: kept for the error
  }
}

/** Sends one API call and returns its parsed JSON body, retrying 429s as the service's Retry-After asks. */
export async function send<T>(
  t: TransportOptions,
  method: string,
  path: string,
  body?: unknown,
  signal?: AbortSignal,
  extras: SendExtras = {},
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...t.headers, ...extras.headers };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const retryTransient = extras.retryTransient ?? method === 'GET';
  let transient = 0;
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await t.fetch(t.baseUrl + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (err) {
      // A network error (connection refused or reset): the request may or may not have arrived.
      if (signal?.aborted || !retryTransient || transient >= t.maxRetries) throw err;
      await sleep(transientDelayMs(transient++), signal);
      continue;
    }
    if (retryTransient && TRANSIENT.has(res.status) && transient < t.maxRetries) {
      await res.body?.cancel();
      await sleep(transientDelayMs(transient++), signal);
      continue;
    }
    const parsed = await bodyOf(res);
    if (res.ok) return parsed as T;
    if (res.status === 429 && attempt < t.maxRetries) {
      // Without a Retry-After, back off exponentially from one second.
      const seconds = parseRetryAfter(res.headers.get('retry-after')) ?? 2 ** attempt;
      await sleep(Math.min(seconds * 1000, t.maxRetryDelayMs), signal);
      continue;
    }
    throw errorFor(res.status, parsed, res.headers.get('retry-after'));
  }
}
