import { actionsEndpoints as ep, type ActionType, type DevicePrincipal } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { handle, type BoundHandler, type RequestContext } from '@agent-auth/bus';
import type { RequestRow } from '../store/rows.js';
import type { ActionsDeps } from './deps.js';
import { metadataOf, withLazyExpiry } from './actions.js';
import { safeEqual } from './credentials.js';
import { toActionView, toPendingItem } from './views.js';
import { approvalMessage, verifyApprovalSignature } from './device-signatures.js';
import { acceptTotpCode } from './totp.js';

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

/**
 * Takes back the spend an approval recorded once that approval did not go through, but only when the request
 * can no longer be approved (denied, or past its expiry). Recording is per action, so another approval racing
 * this one may be counting on the very same row; while the request is still approvable, or when its state cannot
 * be read, the spend stays: over-counting is the safe side.
 */
async function releaseIfNeverApproved(deps: ActionsDeps, spend: { action_id: string; account_id: string }, ctx: RequestContext): Promise<void> {
  const found = await deps.requests.findForAccount(spend.action_id, spend.account_id).catch(() => undefined);
  // Lazy expiry settles "past its expiry" on the database's clock, the one approvals are checked against.
  const current = found && (await withLazyExpiry(deps, found).catch(() => undefined));
  if (current?.status === 'denied' || current?.status === 'expired') await deps.policy.releaseSpend(spend, ctx);
}

/**
 * Once a device has a public key, its approvals and denials must be signed over the approval message (DESIGN
 * "Approve and deny"); 403 naming what is wrong otherwise. Devices without a key are not asked for one.
 * True when a signature was verified (recorded in the audit entry).
 */
async function checkDeviceSignature(
  deps: ActionsDeps,
  device: DevicePrincipal,
  row: RequestRow,
  decision: 'approve' | 'deny',
  body: { signature?: string | null; timestamp?: string | null },
): Promise<boolean> {
  const publicKeyPem = await deps.identities.devicePublicKey(device.device_ref);
  if (!publicKeyPem) return false;
  const message = approvalMessage({ requestId: row.id, decision, contentHash: row.content_hash, timestamp: body.timestamp ?? '' });
  const check = verifyApprovalSignature({ publicKeyPem, message, signature: body.signature, timestamp: body.timestamp, nowMs: Date.now() });
  if (!check.ok) throw errors.forbidden(check.reason);
  return true;
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
      if (body.payment_method === 'wallet_pay' && row.amount_cents === null) throw errors.badRequest('payment_method: wallet_pay needs a request with an amount');
      const signed = await checkDeviceSignature(deps, device, row, 'approve', body);
      // Last of the checks, because accepting a TOTP code uses it up.
      if (body.totp_code) await acceptTotpCode(deps, device.account_id, body.totp_code);
      const resolvedBy = body.totp_code ? 'totp' : body.payment_method === 'wallet_pay' ? 'wallet_pay' : 'biometric';
      // A person's approval counts as spend. It is recorded before the approval is written and taken back if the
      // approval does not happen, so a failure between the two can only over-count (never let spend pass a limit
      // unseen); recording is idempotent per action, so racing approvals of one request count it once.
      const spend = row.amount_cents === null ? null : { action_id: id, account_id: device.account_id, agent_id: row.agent_id, action_type: row.action_type as ActionType, amount_cents: Number(row.amount_cents), currency: row.currency };
      if (spend) await deps.policy.recordSpend(spend, ctx);
      const updated = await deps.requests.resolve(id, device.account_id, { status: 'approved', resolved_by: resolvedBy }, {
        event: 'approved', actor: `device:${device.device_ref}`, detail: { method: resolvedBy, signed },
      }).catch(async (err: unknown) => {
        if (spend) await releaseIfNeverApproved(deps, spend, ctx);
        throw err;
      });
      if (!updated) {
        if (spend) await releaseIfNeverApproved(deps, spend, ctx);
        return lostRace(deps, device, id);
      }
      ctx.log.info({ action_id: id, resolved_by: resolvedBy }, 'action approved');
      return toActionView(updated, metadataOf(deps, updated));
    }),

    handle(ep.deny, async ({ device, id, body }, ctx) => {
      const row = await pendingRequest(deps, device, id);
      const signed = await checkDeviceSignature(deps, device, row, 'deny', body);
      const updated = await deps.requests.resolve(id, device.account_id, { status: 'denied', resolved_by: 'user', reason: body.reason ?? null }, {
        event: 'denied', actor: `device:${device.device_ref}`, detail: { reason: body.reason ?? null, signed },
      });
      if (!updated) return lostRace(deps, device, id);
      ctx.log.info({ action_id: id }, 'action denied');
      return toActionView(updated, metadataOf(deps, updated));
    }),
  ];
}
