import { type BoundHandler, handle } from '@agent-auth/bus';
import { vaultEndpoints as ep } from '@agent-auth/contracts';
import type { createRelay } from '../use-cases/relay.js';

/** Other services' outbound calls, on the bus (not kept per call: a resend is a second call, as a retry would be). */
export function relayHandlers(relay: ReturnType<typeof createRelay>): BoundHandler[] {
  return [handle(ep.relay, (call) => relay(call))];
}
