// The one place that talks HTTP: JSON in and out, typed errors, bounded retry on 429.
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

/** Sends one API call and returns its parsed JSON body, retrying 429s as the service's Retry-After asks. */
export async function send<T>(t: TransportOptions, method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...t.headers };
  if (body !== undefined) headers['content-type'] = 'application/json';
  for (let attempt = 0; ; attempt++) {
    const res = await t.fetch(t.baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON: keep the text for the error */
    }
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
