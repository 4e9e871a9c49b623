import type { EndpointDef } from '@agent-auth/contracts';
import { isAppError } from '@agent-auth/errors';
import { recordBusRequest } from '@agent-auth/metrics';

/** Runs one bus request and records its latency by subject and outcome ('ok', or the error's HTTP status). */
export async function timedRequest<T>(endpoint: EndpointDef, send: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const subject = `${endpoint.service}.${endpoint.name}`;
  try {
    const result = await send();
    recordBusRequest(subject, 'ok', (performance.now() - started) / 1000);
    return result;
  } catch (err) {
    recordBusRequest(subject, isAppError(err) ? String(err.status) : 'error', (performance.now() - started) / 1000);
    throw err;
  }
}
