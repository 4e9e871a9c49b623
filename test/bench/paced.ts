// An open-loop load at a steady rate: request i is due at start + i / rate, spread evenly over the run, and its
// latency counts from when it was due (a request that waits for a free connection waits on the clock). autocannon's
// rate cap is not this: each connection sends at full speed until it has made its share of the second, then idles,
// so its "half rate" is bursts at full speed, measured as such.
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import type { Figures } from './load.js';

export interface PacedOptions {
  rate: number;
  seconds: number;
  connections: number;
  /** Headers made afresh for every request (e.g. a new Idempotency-Key each time). */
  eachRequest?: () => Record<string, string>;
}

/** POSTs `body` to `url` at `rate` per second for `seconds`; latency percentiles with sub-millisecond precision. */
export async function pacedLoad(
  name: string,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  options: PacedOptions,
): Promise<Figures> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: options.connections, pipelining: 1 });
  const payload = JSON.stringify(body);
  const total = Math.round(options.rate * options.seconds);
  const latencies: number[] = [];
  let non2xx = 0;
  let errors = 0;
  const started = performance.now();
  const send = async (due: number) => {
    try {
      const res = await pool.request({
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers, ...options.eachRequest?.() },
        body: payload,
      });
      await res.body.dump();
      if (res.statusCode < 200 || res.statusCode > 299) non2xx++;
    } catch {
      errors++;
    }
    latencies.push(performance.now() - due);
  };
  const inFlight: Promise<void>[] = [];
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (next < total && started + (next * 1000) / options.rate <= now) {
        inFlight.push(send(started + (next * 1000) / options.rate));
        next++;
      }
      if (next >= total) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  await Promise.all(inFlight);
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
  return { name, rps: total / elapsed, p50: pct(50), p99: pct(99), non2xx, errors, total };
}
