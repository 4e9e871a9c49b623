import { type BoundHandler, handle } from '@agent-auth/bus';
import { actionsEndpoints as ep } from '@agent-auth/contracts';
import type { UseCases } from '../use-cases/use-cases.js';

/** Verifiable decisions on the bus: the receipt keys, and the account's audit chain as a device reads it. */
export function auditHandlers(uc: UseCases): BoundHandler[] {
  return [
    handle(ep.jwks, async () => uc.auditChain.jwks()),
    handle(ep.auditPage, ({ device, after, limit }) => uc.auditChain.page(device.account_id, { after, limit })),
    handle(ep.auditTrail, ({ device, id }) => uc.auditChain.ofRequest(device.account_id, id)),
    handle(ep.auditHead, ({ device }) => uc.auditChain.head(device.account_id)),
  ];
}
