import { actionsEndpoints as ep, type DevicePrincipal } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { handle, type BoundHandler } from '@agent-auth/bus';
import type { RequestRow } from '../store/rows.js';
import type { ActionsDeps } from './deps.js';
import { metadataOf, withLazyExpiry } from './actions.js';
import { safeEqual } from './credentials.js';
import { toActionView, toPendingItem } from './views.js';

const PENDING_LIST_MAX = 500;

function notPending(row: RequestRow) {
  return errors.conflict(`Action request is '${row.status}', not pending`);
}

/** Finds a request of the device's account that is still pending, or throws 404 / 409. */
async function pendingRequest(deps: ActionsDeps, device: DevicePrincipal, id: string): Promise<RequestRow> {
  const found = await deps.requests.findForAccount(id, device.account_id);
  if (!found) throw errors.notFound(`Action request '${id}' not found`);
  const row = await withLazyExpiry(deps, found);
  if (row.status !== 'pending') throw notPending(row);
  return row;
}

/** After a conditional update matched nothing, explains why with the request's current state. */
async function lostRace(deps: ActionsDeps, device: DevicePrincipal, id: string): Promise<never> {
  const row = await pendingRequest(deps, device, id);
  throw notPending(row);
}

/** The device's pending list, and approving or denying a request. */
export function resolutionHandlers(deps: ActionsDeps): BoundHandler[] {
  return [
    handle(ep.pending, async ({ device }) => {
      const rows = await deps.requests.pendingForAccount(device.account_id, PENDING_LIST_MAX);
      return { requests: rows.map((r) => toPendingItem(r, metadataOf(deps, r))) };
    }),

    handle(ep.approve, async ({ device, id, body }, ctx) => {
      const row = await pendingRequest(deps, device, id);
      if (row.content_hash) {
        if (!body.content_hash) throw errors.forbidden('content_hash is required to approve a vault execution request');
        if (!safeEqual(body.content_hash.toLowerCase(), row.content_hash)) throw errors.forbidden('content_hash does not match the request (content hash mismatch)');
      }
      if (body.totp_code) throw errors.forbidden('TOTP is not configured for this account');
      let resolvedBy = 'biometric';
      if (body.payment_method === 'wallet_pay') {
        if (row.amount_cents === null) throw errors.badRequest('payment_method: wallet_pay needs a request with an amount');
        resolvedBy = 'wallet_pay';
      }
      const updated = await deps.requests.resolve(id, device.account_id, { status: 'approved', resolved_by: resolvedBy }, {
        event: 'approved', actor: `device:${device.device_ref}`, detail: { method: resolvedBy },
      });
      if (!updated) return lostRace(deps, device, id);
      ctx.log.info({ action_id: id, resolved_by: resolvedBy }, 'action approved');
      return toActionView(updated, metadataOf(deps, updated));
    }),

    handle(ep.deny, async ({ device, id, body }, ctx) => {
      await pendingRequest(deps, device, id);
      const updated = await deps.requests.resolve(id, device.account_id, { status: 'denied', resolved_by: 'user', reason: body.reason ?? null }, {
        event: 'denied', actor: `device:${device.device_ref}`, detail: { reason: body.reason ?? null },
      });
      if (!updated) return lostRace(deps, device, id);
      ctx.log.info({ action_id: id }, 'action denied');
      return toActionView(updated, metadataOf(deps, updated));
    }),
  ];
}
