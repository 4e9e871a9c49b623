import type { RequestContext } from '@agent-auth/bus';
import type {
  ActionType,
  ActionView,
  ApproveRequest,
  BatchApproveRequest,
  BatchDenyRequest,
  BatchEntry,
  BatchResult,
  BatchResults,
  DenyRequest,
  DeviceProof,
  DevicePrincipal,
  RecordSpendRequest,
  ReleaseSpendRequest,
} from '@agent-auth/contracts';
import { safeEqual } from '@agent-auth/encryption';
import { errors, isAppError } from '@agent-auth/errors';
import { acceptsEditedInput, toolInputHash } from '@agent-auth/contracts';
import {
  approvalMessage,
  batchApprovalMessage,
  checkTimestamp,
  verifyApprovalSignature,
} from '../domain/device-signatures.js';
import { toActionView } from '../domain/views.js';
import { decidedAlreadyBy } from '../domain/earlier-decision.js';
import { receiptDetail } from '../domain/new-action.js';
import type { RequestRow } from '../domain/rows.js';
import { mayAnswer } from '../domain/routing.js';
import type { ActionsDeps } from './deps.js';
import type { Expiry } from './expiry.js';
import type { MetadataSeal } from './metadata.js';
import type { Passkeys } from './passkeys.js';
import type { Grants } from './grants.js';
import type { Totp } from './totp.js';
import { recordDecision } from '@agent-auth/metrics';

type Deps = Pick<ActionsDeps, 'requests' | 'identities' | 'policy' | 'receipts'> & {
  expiry: Expiry;
  metadata: MetadataSeal;
  totp: Totp;
  passkeys: Passkeys;
  grants: Grants;
};

/** What an approval asked, single or batch: the TOTP code, the payment method (single only), the proof as sent. */
type Approval = Pick<ApproveRequest, 'totp_code' | 'proof'> & {
  payment_method?: ApproveRequest['payment_method'];
  /** Approve with changes (single approvals of a tool call only): the input the holder edited. */
  updated_input?: ApproveRequest['updated_input'];
};

/** An edited tool input with its digest, as the request, its receipt and its audit entry keep it. */
interface InputEdit {
  input: Record<string, unknown>;
  hash: string;
}

/** How a device proved a decision: recorded on the request and in its audit entry. */
interface DecisionProof {
  signed: boolean;
  user_verified: boolean;
  passkey_id: string | null;
}

/** What the request itself keeps of how the holder was verified. */
const verifiedBy = (proof: DecisionProof) => ({ user_verified: proof.user_verified, passkey_id: proof.passkey_id });

/**
 * What the audit trail keeps of a device's signature besides the proof: the timestamp it signed, so that with the
 * receipt's device_signature anyone holding the device's public key can check it again.
 */
const signedTimestamp = (proof: DecisionProof, sent: DeviceProof) =>
  proof.signed ? { signed_timestamp: sent.timestamp } : {};

/** A person's answer to a pending request: approve (with its checks and spend) or deny. */
export function createResolution(deps: Deps) {
  const { requests, identities, policy, expiry, metadata, totp, passkeys } = deps;

  /**
   * Finds a request of the device's account that is still pending, or throws 404 / 409; 403 when it is routed to
   * other members (domain/routing.ts).
   */
  const pendingRequest = async (device: DevicePrincipal, id: string): Promise<RequestRow> => {
    const found = await requests.findForAccount(id, device.account_id);
    if (!found) throw errors.actionNotFound(id);
    if (!mayAnswer(found, device)) throw errors.notRequestApprover(id);
    const row = await expiry.current(found);
    if (row.status !== 'pending') throw errors.actionNotPending(row.status);
    return row;
  };

  /** After a conditional update matched nothing, explains why with the request's current state. */
  const lostRace = async (device: DevicePrincipal, id: string): Promise<never> => {
    const row = await pendingRequest(device, id);
    throw errors.actionNotPending(row.status);
  };

  /**
   * Takes back the spend an approval recorded once that approval did not go through, but only when the request
   * can no longer be approved (denied, or past its expiry). Recording is per action, so another approval racing
   * this one may be counting on the very same row; while the request is still approvable, or when its state
   * cannot be read, the spend stays: over-counting is the safe side.
   */
  const releaseIfNeverApproved = async (spend: ReleaseSpendRequest, ctx: RequestContext): Promise<void> => {
    const found = await requests.findForAccount(spend.action_id, spend.account_id).catch(() => undefined);
    // Lazy expiry settles "past its expiry" on the database's clock, the one approvals are checked against.
    const current = found && (await expiry.current(found).catch(() => undefined));
    if (current?.status === 'denied' || current?.status === 'expired') await policy.releaseSpend(spend, ctx);
  };

  /** Verifies an ECDSA signature over the approval message; true, or a 403 saying why not. */
  const checkSignature = (publicKeyPem: string, message: string, sent: DeviceProof): true => {
    const check = verifyApprovalSignature({
      publicKeyPem,
      message,
      signature: sent.signature,
      timestamp: sent.timestamp,
      nowMs: Date.now(),
    });
    if (!check.ok) throw errors.deviceSignatureInvalid(check.reason);
    return true;
  };

  /**
   * Once a device has a public key, its approvals and denials must be signed over the approval message
   * (or the batch message); once it has a passkey, they must carry a passkey assertion over
   * that message's digest or such a signature. 403 naming what is wrong otherwise; devices with neither
   * are not asked for one.
   */
  const checkDeviceProof = async (
    device: DevicePrincipal,
    message: string,
    sent: DeviceProof,
    ctx: RequestContext,
  ): Promise<DecisionProof> => {
    const publicKeyPem = await identities.devicePublicKey(device.device_ref);
    if (sent.webauthn) {
      if (!sent.timestamp)
        throw errors.passkeyAssertionInvalid(
          'timestamp is required beside it (the one in the approval message it signs)',
        );
      const time = checkTimestamp(sent.timestamp, Date.now());
      if (!time.ok) throw errors.passkeyAssertionInvalid(time.reason);
      const signed = publicKeyPem !== null && sent.signature ? checkSignature(publicKeyPem, message, sent) : false;
      const rp = sent.relying_party ?? undefined;
      const passkeyId = await passkeys.verifyDecision(device, rp, sent.webauthn, message, ctx);
      return { signed, user_verified: true, passkey_id: passkeyId };
    }
    if (!publicKeyPem) {
      if (await passkeys.deviceHasAny(device)) throw errors.passkeyRequired();
      return { signed: false, user_verified: false, passkey_id: null };
    }
    return { signed: checkSignature(publicKeyPem, message, sent), user_verified: false, passkey_id: null };
  };

  /** The single approval message of one request, with the timestamp as sent. */
  const singleMessage = (row: RequestRow, decision: 'approve' | 'deny', sent: DeviceProof) =>
    approvalMessage({ requestId: row.id, decision, contentHash: row.content_hash, timestamp: sent.timestamp ?? '' });

  /** The batch message: the ids and content hashes in the order the device sent them. */
  const batchMessage = (decision: 'approve' | 'deny', batch: BatchApproveRequest | BatchDenyRequest) =>
    batchApprovalMessage({
      decision,
      requests: batch.requests.map((r) => ({ id: r.id, contentHash: r.content_hash })),
      timestamp: batch.proof.timestamp ?? '',
    });

  const checkApproval = (
    row: RequestRow,
    asked: { content_hash: string | null; payment_method?: 'wallet_pay' | null },
  ) => {
    if (row.content_hash) {
      if (!asked.content_hash) throw errors.contentHashRequired();
      if (!safeEqual(asked.content_hash.toLowerCase(), row.content_hash)) throw errors.contentHashMismatch('approval');
    }
    if (asked.payment_method === 'wallet_pay' && row.amount_cents === null) throw errors.walletPayNeedsAmount();
  };

  const spendOf = (row: RequestRow, device: DevicePrincipal): RecordSpendRequest | null => {
    if (row.amount_cents === null) return null;
    return {
      action_id: row.id,
      account_id: device.account_id,
      agent_id: row.agent_id,
      action_type: row.action_type as ActionType,
      amount_cents: Number(row.amount_cents),
      currency: row.currency,
    };
  };

  /**
   * The receipt of a person's answer: the device by its public reference, the signature it sent, and
   * the passkey that verified the holder.
   */
  const receiptOf = (
    row: RequestRow,
    device: DevicePrincipal,
    answer: { status: 'approved' | 'denied'; resolved_by: string; at: Date; edit?: InputEdit | null },
    proof: DecisionProof,
    sent: DeviceProof,
  ) =>
    deps.receipts.sign(row, {
      status: answer.status,
      resolved_by: answer.resolved_by,
      resolved_at: answer.at,
      ...(answer.edit ? { updated_input_hash: answer.edit.hash } : {}),
      device: {
        device_id: device.device_ref,
        member_id: device.member_id,
        device_signature: sent.signature,
        ...(proof.user_verified ? { user_verified: true, passkey_id: proof.passkey_id } : {}),
      },
    });

  /**
   * Approve with changes: only a tool call from a client that runs an edited input (400 otherwise), and not under
   * a quorum (the others approved the input as asked).
   */
  const inputEditOf = (row: RequestRow, approval: Approval): InputEdit | null => {
    if (!approval.updated_input) return null;
    const asked = metadata.open(row);
    if (!acceptsEditedInput(asked.source, asked.hook_event_name))
      throw errors.invalidRequest("updated_input: this request's client does not take an edited input");
    if (row.quorum_required)
      throw errors.invalidRequest('updated_input: a request under a quorum is approved as asked');
    return { input: approval.updated_input, hash: toolInputHash(approval.updated_input) };
  };

  /** How a device's approval was made: its resolved_by if it resolves the request. */
  const methodOf = (approval: Approval, proof: DecisionProof): string =>
    // A passkey that verified the holder is what "biometric" means, whatever else came with it.
    proof.user_verified
      ? 'biometric'
      : approval.totp_code
        ? 'totp'
        : approval.payment_method === 'wallet_pay'
          ? 'wallet_pay'
          : 'biometric';

  /**
   * One device's approval of a request under a quorum rule: recorded on the request (409 when this device, or
   * another device of the same member, approved it already: a quorum counts people); the approval that completes
   * the quorum approves the request, its method the
   * request's resolved_by. Until then the request stays pending, and nothing is announced (webhooks only on the
   * final outcome).
   */
  const approveUnderQuorum = async (
    device: DevicePrincipal,
    row: RequestRow,
    asked: Approval,
    proof: DecisionProof,
    ctx: RequestContext,
    extra: Record<string, unknown>,
  ): Promise<ActionView> => {
    const approval = {
      device_id: device.device_ref,
      member_id: device.member_id,
      method: methodOf(asked, proof),
      at: new Date().toISOString(),
      signed: proof.signed,
    };
    const audit = {
      event: 'quorum_approval',
      actor: `device:${device.device_ref}`,
      detail: { ...approval, ...proof, ...signedTimestamp(proof, asked.proof), ...extra },
    };
    const updated = await requests.addQuorumApproval(row.id, device.account_id, approval, audit);
    if (!updated) {
      const current = await pendingRequest(device, row.id);
      const before = current.quorum_approvals ?? [];
      if (before.some((a) => a.device_id === device.device_ref)) throw errors.quorumAlreadyApproved();
      if (before.some((a) => a.member_id === device.member_id)) throw errors.quorumSameMember();
      // The quorum was completed by another device's approval a moment ago; that one resolves the request.
      throw errors.actionNotPending('approved');
    }
    const approvals = updated.quorum_approvals ?? [];
    if (approvals.length < (updated.quorum_required ?? 0)) {
      ctx.log.info({ action_id: row.id, approvals: approvals.length }, 'quorum approval recorded');
      return toActionView(updated, metadata.open(updated));
    }
    try {
      return await approveChecked(device, updated, asked, proof, ctx, { ...extra, quorum: approvals });
    } catch (err) {
      // The completing approval did not go through: take it back, so that this device (or another) can complete it.
      await requests.dropQuorumApproval(row.id, device.account_id, device.device_ref).catch(() => undefined);
      throw err;
    }
  };

  /**
   * Approves one pending request once the device's proof (signature, passkey) and TOTP code have been accepted: the
   * one per-request operation that single and batch approvals share. `extra` goes into the audit entry.
   */
  const approveChecked = async (
    device: DevicePrincipal,
    row: RequestRow,
    approval: Approval,
    proof: DecisionProof,
    ctx: RequestContext,
    extra: Record<string, unknown> = {},
  ): Promise<ActionView> => {
    const id = row.id;
    const resolvedBy = methodOf(approval, proof);
    // A person's approval counts as spend. It is recorded before the approval is written and taken back if the
    // approval does not happen, so a failure between the two can only over-count (never let spend pass a limit
    // unseen); recording is idempotent per action, so racing approvals of one request count it once.
    const spend = spendOf(row, device);
    if (spend) await policy.recordSpend(spend, ctx);
    const at = new Date();
    const sent = approval.proof;
    const edit = inputEditOf(row, approval);
    const updated = await receiptOf(row, device, { status: 'approved', resolved_by: resolvedBy, at, edit }, proof, sent)
      .then((receipt) => {
        const detail = {
          method: resolvedBy,
          member_id: device.member_id,
          ...proof,
          ...signedTimestamp(proof, sent),
          ...extra,
          ...(edit ? { content_hash: row.content_hash, updated_input_hash: edit.hash } : {}),
          ...receiptDetail(receipt),
        };
        const audit = { event: 'approved', actor: `device:${device.device_ref}`, detail };
        const change = {
          status: 'approved' as const,
          resolved_by: resolvedBy,
          ...verifiedBy(proof),
          resolved_at: at,
          receipt,
          updated_input_enc: edit ? metadata.sealUpdatedInput(id, edit.input) : null,
          updated_input_hash: edit?.hash ?? null,
        };
        return requests.resolve(id, device.account_id, change, audit);
      })
      .catch(async (err: unknown) => {
        if (spend) await releaseIfNeverApproved(spend, ctx);
        throw err;
      });
    if (!updated) {
      if (spend) await releaseIfNeverApproved(spend, ctx);
      return lostRace(device, id);
    }
    ctx.log.info({ action_id: id, resolved_by: resolvedBy, edited: edit !== null }, 'action approved');
    recordDecision('approved', 'device');
    return toActionView(updated, metadata.open(updated), metadata.openUpdatedInput(updated));
  };

  /** A device's approval of one request, once its proof is accepted: under its quorum rule if one matched. */
  const approveOne = (
    device: DevicePrincipal,
    row: RequestRow,
    asked: Approval,
    proof: DecisionProof,
    ctx: RequestContext,
    extra: Record<string, unknown> = {},
  ): Promise<ActionView> =>
    row.quorum_required
      ? approveUnderQuorum(device, row, asked, proof, ctx, extra)
      : approveChecked(device, row, asked, proof, ctx, extra);

  /** Denies one pending request once the device's proof has been accepted (shared by single and batch denials). */
  const denyChecked = async (
    device: DevicePrincipal,
    row: RequestRow,
    denial: Pick<DenyRequest, 'reason' | 'proof'>,
    proof: DecisionProof,
    ctx: RequestContext,
    extra: Record<string, unknown> = {},
  ): Promise<ActionView> => {
    const id = row.id;
    const { reason, proof: sent } = denial;
    const at = new Date();
    const receipt = await receiptOf(row, device, { status: 'denied', resolved_by: 'user', at }, proof, sent);
    const detail = {
      reason,
      member_id: device.member_id,
      ...proof,
      ...signedTimestamp(proof, sent),
      ...extra,
      ...receiptDetail(receipt),
    };
    const audit = { event: 'denied', actor: `device:${device.device_ref}`, detail };
    const change = {
      status: 'denied' as const,
      resolved_by: 'user',
      reason,
      ...verifiedBy(proof),
      resolved_at: at,
      receipt,
    };
    const updated = await requests.resolve(id, device.account_id, change, audit);
    if (!updated) return lostRace(device, id);
    ctx.log.info({ action_id: id }, 'action denied');
    recordDecision('denied', 'device');
    return toActionView(updated, metadata.open(updated));
  };

  type Decided = 'approved' | 'denied';

  /** The request as it stands if it already stands as this device's `decision` (its approval under a quorum too). */
  const decidedBefore = async (device: DevicePrincipal, id: string, decision: Decided) => {
    const found = await requests.findForAccount(id, device.account_id);
    if (!found) return undefined;
    const mine =
      decidedAlreadyBy(found, device.device_ref, decision) ||
      (decision === 'approved' &&
        found.status === 'pending' &&
        (found.quorum_approvals ?? []).some((a) => a.device_id === device.device_ref));
    return mine ? toActionView(found, metadata.open(found), metadata.openUpdatedInput(found)) : undefined;
  };

  /**
   * A decision the gateway sent again (the replica it went to first died or went silent) may find that replica's
   * decision made: it is answered with the request as it stands, not a 409 for its own earlier success. Any other
   * refusal stands. Only a resend looks: a device deciding twice in two calls still gets its 409.
   */
  const orEarlierDecision = async (
    device: DevicePrincipal,
    id: string,
    decision: Decided,
    ctx: RequestContext,
    err: unknown,
  ): Promise<ActionView> => {
    if (!ctx.resent || !isAppError(err) || err.status !== 409) throw err;
    const view = await decidedBefore(device, id, decision);
    if (!view) throw err;
    ctx.log.info({ action_id: id }, 'decision sent again: answering the one already made');
    return view;
  };

  /**
   * A batch sent again whose every request already stands as this device's decision: answered as it stands, without
   * checking its proof or TOTP code again (the first send used them up).
   */
  const batchDecidedBefore = async (
    device: DevicePrincipal,
    items: readonly BatchEntry[],
    decision: Decided,
    ctx: RequestContext,
  ): Promise<BatchResults | undefined> => {
    if (!ctx.resent) return undefined;
    const results: BatchResult[] = [];
    for (const item of items) {
      const view = await decidedBefore(device, item.id, decision);
      if (!view) return undefined;
      results.push({ id: item.id, status: 200, action: view });
    }
    return { results };
  };

  /**
   * Resolves each request of a batch on its own, in the order sent: a refusal of one (404, 409, 403 on its content
   * hash) is its result and the others still go through. Anything that is not a refusal (the database or the bus
   * failing) stops the batch as it would stop a single decision.
   */
  const eachOf = async (
    items: readonly BatchEntry[],
    work: (item: BatchEntry) => Promise<ActionView>,
    settled: { device: DevicePrincipal; decision: Decided; ctx: RequestContext },
  ): Promise<BatchResults> => {
    const results: BatchResult[] = [];
    for (const item of items) {
      try {
        const action = await work(item).catch((err: unknown) =>
          orEarlierDecision(settled.device, item.id, settled.decision, settled.ctx, err),
        );
        results.push({ id: item.id, status: 200, action });
      } catch (err) {
        if (!isAppError(err)) throw err;
        results.push({ id: item.id, status: err.status, code: err.code, detail: err.detail });
      }
    }
    return { results };
  };

  /**
   * What the audit entry of a request decided in a signed or passkey-verified batch keeps, so that the signature can
   * be checked again from the audit trail: the batch's requests and hashes as signed.
   */
  const batchDetail = (proof: DecisionProof, batch: BatchApproveRequest | BatchDenyRequest) => ({
    batch_size: batch.requests.length,
    ...(proof.signed || proof.user_verified
      ? { signed_batch: batch.requests.map((r) => ({ id: r.id, content_hash: r.content_hash })) }
      : {}),
  });

  const approveSingle = async (request: ApproveRequest, ctx: RequestContext): Promise<ActionView> => {
    const { device } = request;
    const row = await pendingRequest(device, request.id);
    checkApproval(row, request);
    inputEditOf(row, request);
    const proof = await checkDeviceProof(device, singleMessage(row, 'approve', request.proof), request.proof, ctx);
    // Last of the checks, because accepting a TOTP code uses it up.
    if (request.totp_code) await totp.accept(device, request.totp_code, ctx);
    if (!request.grant) return approveOne(device, row, request, proof, ctx);
    // "Allow similar": the grant is made once the approval stands, so the approval creating it is
    // not counted against it; its id is fixed first so that the approval's audit entry names it.
    const grantId = deps.grants.newGrantId();
    const view = await approveOne(device, row, request, proof, ctx, { grant_id: grantId });
    // Under a quorum, only the approval that approves the request makes the grant.
    if (view.status === 'approved') await deps.grants.createFrom(device, row, request.grant, grantId, ctx);
    return view;
  };

  const denySingle = async (request: DenyRequest, ctx: RequestContext): Promise<ActionView> => {
    const { device } = request;
    const row = await pendingRequest(device, request.id);
    const proof = await checkDeviceProof(device, singleMessage(row, 'deny', request.proof), request.proof, ctx);
    return denyChecked(device, row, request, proof, ctx);
  };

  return {
    approve(request: ApproveRequest, ctx: RequestContext): Promise<ActionView> {
      return approveSingle(request, ctx).catch((err: unknown) =>
        orEarlierDecision(request.device, request.id, 'approved', ctx, err),
      );
    },

    deny(request: DenyRequest, ctx: RequestContext): Promise<ActionView> {
      return denySingle(request, ctx).catch((err: unknown) =>
        orEarlierDecision(request.device, request.id, 'denied', ctx, err),
      );
    },

    /**
     * Approves several requests: the proof (signature or passkey over the batch message) and the TOTP
     * code are checked once for the whole batch, a failure of either refusing all of it (403); then each request is
     * approved by the same operation as a single approval, with its own result.
     */
    async approveMany(batch: BatchApproveRequest, ctx: RequestContext): Promise<BatchResults> {
      const { device } = batch;
      const before = await batchDecidedBefore(device, batch.requests, 'approved', ctx);
      if (before) return before;
      const proof = await checkDeviceProof(device, batchMessage('approve', batch), batch.proof, ctx);
      if (batch.totp_code) await totp.accept(device, batch.totp_code, ctx);
      const extra = batchDetail(proof, batch);
      return eachOf(
        batch.requests,
        async (item) => {
          const row = await pendingRequest(device, item.id);
          checkApproval(row, item);
          return approveOne(device, row, batch, proof, ctx, extra);
        },
        { device, decision: 'approved', ctx },
      );
    },

    /** Denies several requests: one proof for the batch, each request denied on its own. */
    async denyMany(batch: BatchDenyRequest, ctx: RequestContext): Promise<BatchResults> {
      const { device } = batch;
      const before = await batchDecidedBefore(device, batch.requests, 'denied', ctx);
      if (before) return before;
      const proof = await checkDeviceProof(device, batchMessage('deny', batch), batch.proof, ctx);
      const extra = batchDetail(proof, batch);
      return eachOf(
        batch.requests,
        async (item) => {
          const row = await pendingRequest(device, item.id);
          return denyChecked(device, row, batch, proof, ctx, extra);
        },
        { device, decision: 'denied', ctx },
      );
    },
  };
}
