import { type BoundHandler, handle, handleOnce } from '@agent-auth/bus';
import { actionsEndpoints as ep } from '@agent-auth/contracts';
import type { UseCases } from '../use-cases/use-cases.js';

/** Action requests on the bus: the agent's side (create, read, list) and the device's (pending, approve, deny, one at a time or in batches). */
export function actionHandlers(uc: UseCases): BoundHandler[] {
  return [
    handle(ep.create, (request, ctx) => uc.createAction(request, ctx)),
    handle(ep.get, ({ agent, id }) => uc.reading.get(agent, id)),
    handle(ep.list, (request) => uc.reading.list(request)),
    handle(ep.pending, ({ device }) => uc.reading.pending(device.account_id, device)),
    handle(ep.approve, (request, ctx) => uc.resolution.approve(request, ctx)),
    handle(ep.deny, (request, ctx) => uc.resolution.deny(request, ctx)),
    // A batch's results are kept per call, sealed (they hold the requests' metadata): a resend gets them as the first
    // send gave them, its TOTP code and proof not checked again.
    handleOnce(ep.approveMany, (request, ctx) => uc.resolution.approveMany(request, ctx)),
    handleOnce(ep.denyMany, (request, ctx) => uc.resolution.denyMany(request, ctx)),
    handleOnce(ep.revokeGrant, ({ device, grant_id }, ctx) => uc.grants.revoke(device, grant_id, ctx)),
  ];
}
