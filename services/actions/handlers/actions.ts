import { type BoundHandler, handle } from '@agent-auth/bus';
import { actionsEndpoints as ep } from '@agent-auth/contracts';
import type { UseCases } from '../use-cases/use-cases.js';

/** Action requests on the bus: the agent's side (create, read, list) and the device's (pending, approve, deny, one at a time or in batches). */
export function actionHandlers(uc: UseCases): BoundHandler[] {
  return [
    handle(ep.create, ({ agent, action, idempotency_key, action_id }, ctx) =>
      uc.createAction(agent, action, idempotency_key, ctx, action_id),
    ),
    handle(ep.get, ({ agent, id }) => uc.reading.get(agent, id)),
    handle(ep.list, ({ agent, query }) => uc.reading.list(agent, query)),
    handle(ep.pending, ({ device }) => uc.reading.pending(device.account_id)),
    handle(ep.approve, ({ device, id, body, relying_party }, ctx) =>
      uc.resolution.approve(device, id, body, ctx, relying_party),
    ),
    handle(ep.deny, ({ device, id, body, relying_party }, ctx) =>
      uc.resolution.deny(device, id, body, ctx, relying_party),
    ),
    handle(ep.approveMany, ({ device, body, relying_party }, ctx) =>
      uc.resolution.approveMany(device, body, ctx, relying_party),
    ),
    handle(ep.denyMany, ({ device, body, relying_party }, ctx) =>
      uc.resolution.denyMany(device, body, ctx, relying_party),
    ),
    handle(ep.revokeGrant, ({ device, grant_id }, ctx) => uc.grants.revoke(device, grant_id, ctx)),
  ];
}
