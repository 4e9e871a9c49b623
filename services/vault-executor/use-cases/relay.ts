import type { RelayLimits, RelayRequest, RelayResult } from '@agent-auth/contracts';
import { type OutboundClient, OutboundError } from '@agent-auth/outbound';

/** An outbound client with the given limits, the executor's own rules otherwise (insecure hosts, extra CAs). */
export type OutboundFor = (limits: RelayLimits) => OutboundClient;

/**
 * Makes another service's outbound call (a webhook, a Web Push notice, an OAuth client's metadata document): the
 * vault executor is the system's only door to the internet, and every call through it obeys the same rules. No
 * credential is read or injected here.
 */
export function createRelay(deps: { outboundFor: OutboundFor }) {
  return async (call: RelayRequest): Promise<RelayResult> => {
    try {
      const res = await deps.outboundFor(call.limits).request({
        url: call.url,
        method: call.method,
        headers: call.headers,
        body: call.body_base64 === null ? null : Buffer.from(call.body_base64, 'base64'),
      });
      return {
        answered: true,
        status_code: res.statusCode,
        headers: res.headers,
        body_base64: res.body.toString('base64'),
      };
    } catch (err) {
      if (err instanceof OutboundError) return { answered: false, kind: err.kind, detail: err.detail };
      throw err;
    }
  };
}
