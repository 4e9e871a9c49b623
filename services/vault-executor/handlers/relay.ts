import { type BoundHandler, handle } from '@agent-auth/bus';
import { vaultEndpoints as ep } from '@agent-auth/contracts';
import type { createRelay } from '../use-cases/relay.js';
import type { createMailRelay } from '../use-cases/relay-mail.js';

/**
 * Other services' outbound calls and emails, on the bus (not kept per call: a resend is a second call, as a retry
 * would be).
 */
export function relayHandlers(
  relay: ReturnType<typeof createRelay>,
  relayMail: ReturnType<typeof createMailRelay>,
): BoundHandler[] {
  return [handle(ep.relay, (call) => relay(call)), handle(ep.relayMail, (mail) => relayMail(mail))];
}
