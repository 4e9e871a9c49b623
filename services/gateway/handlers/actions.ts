import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  actionsEndpoints as ep,
  ActionView,
  ApproveBody,
  BatchApproveBody,
  BatchDenyBody,
  CreateActionBody,
  DenyBody,
  GetActionQuery,
  IdempotencyKey,
  ListActionsQuery,
  listActionsRequestOf,
  newActionOf,
  approveRequestOf,
  batchApproveRequestOf,
  batchDenyRequestOf,
  denyRequestOf,
  deviceProofOf,
  RequestParams,
  toolCallEndpoints,
} from '@agent-auth/contracts';

/** Body of POST /actions/{id}/cancel: nothing (an empty object, or no body at all). */
const CancelBody = z.object({}).strict();
import { AppError, errors } from '@agent-auth/errors';
import type { Bus } from '@agent-auth/bus';
import type { Config } from '@agent-auth/config';

/** The settings passkeys read: where they are bound. */
type PasskeySettings = Pick<Config, 'WEBAUTHN_RP_ID' | 'WEBAUTHN_ORIGINS'>;
import { addRoute } from './route.js';
import { holdWhilePending, type WaitRegistry } from '../use-cases/held-waits.js';
import { createAction } from '../use-cases/create-action.js';
import { relyingPartyOf } from './relying-party.js';

/** The device's proof in an approve or deny body; a passkey assertion is checked against where the app is served. */
function proofOf(
  body: Pick<ApproveBody, 'signature' | 'timestamp' | 'webauthn'>,
  request: FastifyRequest,
  config: PasskeySettings,
) {
  return deviceProofOf(body, () => relyingPartyOf(request, config));
}

/** The client's Idempotency-Key header, if it sent one (400 when malformed). */
function idempotencyKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const given = headers['idempotency-key'];
  if (given === undefined) return undefined;
  const parsed = IdempotencyKey.safeParse(given);
  if (!parsed.success) throw errors.idempotencyKeyInvalid();
  return parsed.data;
}

/** Action requests: the agent's side (create, read, list) and the device's (pending, approve, deny). */
export function actionRoutes(app: FastifyInstance, bus: Bus, waits: WaitRegistry, config: PasskeySettings): void {
  addRoute(app, {
    method: 'POST',
    url: '/actions',
    tag: 'Actions',
    summary: 'Request an action',
    description:
      'The agent asks for permission. Rules and spending limits may decide at once (`approved` or ' +
      '`denied`, `resolved_by` names how); otherwise the request is `pending` until a device decides or' +
      " it expires. 402 when the free plan's monthly quota is used up. A vault request " +
      '(`metadata.vault_execute`) carries its `content_hash`. An `Idempotency-Key` header (1-255 printable ' +
      'characters) makes a retry safe: the same key within 24 h gets the first answer again, with ' +
      '`Idempotent-Replayed: true`; the same key with another body is 422.',
    auth: 'agent',
    body: CreateActionBody,
    headerDocs: {
      'Idempotency-Key': {
        description:
          'Makes a retry of this create safe: 1-255 printable ASCII characters, chosen by the agent ' +
          '(a UUID per request is enough). Within 24 h, the same key from the same agent gets the first answer ' +
          'again (counted once against the quota); the same key with another body is 422.',
        schema: IdempotencyKey,
      },
    },
    responseHeaders: {
      'Idempotent-Replayed': {
        description:
          '`true` when this answer is the one first given to an earlier request with the same Idempotency-Key.',
        schema: z.literal('true'),
      },
    },
    response: ActionView,
    handler: async ({ principal, body, requestId, headers, setHeader }) => {
      const idempotencyKey = idempotencyKeyOf(headers);
      const created = await createAction(bus, {
        agent: principal,
        action: newActionOf(body),
        idempotencyKey,
        requestId,
      });
      if (created.replayed) setHeader('idempotent-replayed', 'true');
      if ('error' in created) throw new AppError(created.error.status, created.error.code, created.error.detail);
      return created.action;
    },
  });
  addRoute(app, {
    method: 'GET',
    url: '/actions',
    tag: 'Actions',
    summary: "List the agent's requests",
    description:
      "The calling agent's own requests, newest first, filtered by `status` and `action_type`, at most" +
      ' `limit` a page; `next_cursor` (null on the last page) passed back as `cursor` gives the next page.' +
      ' Overdue pending requests are shown expired.',
    auth: 'agent',
    query: ListActionsQuery,
    response: ep.list.response,
    handler: ({ principal, query, requestId }) =>
      bus.requestEncoded(ep.list, listActionsRequestOf(principal, query), { requestId }),
  });
  addRoute(app, {
    method: 'GET',
    url: '/actions/:request_id',
    tag: 'Actions',
    summary: 'Read a request',
    description:
      "One of the calling agent's requests with its current status (an overdue pending request is " +
      "expired on read). 404 for another agent's request. With `wait=S` (1-60) a pending request is held " +
      'until it leaves pending or S seconds pass, then answered as it is (still `pending` on time-out).',
    auth: 'agent',
    params: RequestParams,
    query: GetActionQuery,
    response: ep.get.response,
    handler: ({ principal, params, query, requestId, onClientGone, method }) => {
      const read = () => bus.request(ep.get, { agent: principal, id: params.request_id }, { requestId });
      // A HEAD is not held: its headers are those of the request as it is now.
      if (query.wait === undefined || method === 'HEAD') return read();
      return holdWhilePending({
        registry: waits,
        requestId: params.request_id,
        seconds: query.wait,
        read,
        onClientGone,
      });
    },
  });
  addRoute(app, {
    method: 'GET',
    url: '/pending',
    tag: 'Actions',
    summary: 'List pending requests',
    description:
      "The account's pending requests the calling member may answer (a rule's `approvers`, and once a request " +
      'escalated its `escalate_to`), with everything the agent sent, critical first, then oldest first.',
    auth: 'device',
    response: ep.pending.response,
    handler: ({ principal, requestId }) => bus.requestEncoded(ep.pending, { device: principal }, { requestId }),
  });
  addRoute(app, {
    method: 'POST',
    url: '/actions/approve',
    tag: 'Actions',
    summary: 'Approve several requests',
    description:
      'Approves 1-50 pending requests of the account at once (`requests: [{id, content_hash?}]`; `content_hash` ' +
      'required for vault requests). The proof is given once for the batch: `totp_code` (used once; resolved_by ' +
      '`totp`), `signature` + `timestamp` over the batch message (`aa-approval-batch-v1`, `approve`, one line ' +
      '`id content_hash` per request in the order sent, the timestamp; joined by `\\n`), or `webauthn` + ' +
      "`timestamp` (a passkey assertion over that message's SHA-256). A failed proof refuses the whole batch (403). " +
      'Then each request is resolved on its own: `results` lists, in the order sent, each `id` with the `status` it ' +
      'alone would have had (200 with the `action`; 404 unknown, 409 no longer pending, 403 content hash, with ' +
      '`code` and `detail`).',
    auth: 'device',
    body: BatchApproveBody,
    response: ep.approveMany.response,
    handler: ({ principal, body, request, requestId }) =>
      bus.request(ep.approveMany, batchApproveRequestOf(principal, body, proofOf(body, request, config)), {
        requestId,
      }),
  });
  addRoute(app, {
    method: 'POST',
    url: '/actions/deny',
    tag: 'Actions',
    summary: 'Deny several requests',
    description:
      'Denies 1-50 pending requests of the account at once (`requests: [{id, content_hash?}]`, optional ' +
      '`reason` for all). `signature` or `webauthn`, with `timestamp`, over the batch message with `deny`, as for ' +
      'the batch approve. `results` lists each `id` with its own `status` (200 with the `action`; 404, 409 with ' +
      '`code` and `detail`); the others go through whatever happened to one.',
    auth: 'device',
    body: BatchDenyBody,
    response: ep.denyMany.response,
    handler: ({ principal, body, request, requestId }) =>
      bus.request(ep.denyMany, batchDenyRequestOf(principal, body, proofOf(body, request, config)), { requestId }),
  });
  addRoute(app, {
    method: 'POST',
    url: '/actions/:request_id/approve',
    tag: 'Actions',
    summary: 'Approve a request',
    description:
      'Approves a pending request of the account. Optional `totp_code` (resolved_by `totp`), ' +
      '`payment_method: "wallet_pay"`, `content_hash` (required for vault requests), and `signature` + ' +
      '`timestamp` (required once the device has a public key), or `webauthn` + `timestamp` (a passkey ' +
      "assertion over the same message's SHA-256; required once the device has a passkey; resolved_by " +
      '`biometric`, `user_verified` true). 409 when the request is no longer pending; 403 when a check fails. ' +
      '`grant: {duration_seconds (60-2592000), max_amount?, max_uses?}` also creates a standing grant ' +
      '(`grt_…`, see `GET /grants`) that approves later requests of the same agent, action type, recipient and ' +
      'currency at creation (`resolved_by` `grant:{grant_id}`) until it expires, is revoked, or runs out of ' +
      "budget (`max_amount`, a total in the request's currency) or uses; rules and spending limits still come " +
      'first. `grant.match: {tool_name?, session_id?, command_prefix?}` (at least one) narrows it to the tool ' +
      'calls of that tool, in that session, whose shell command starts with that prefix ("allow for the rest of ' +
      'the session").',
    auth: 'device',
    params: RequestParams,
    body: ApproveBody,
    bodyOptional: true,
    response: ep.approve.response,
    handler: ({ principal, params, body, request, requestId }) =>
      bus.request(ep.approve, approveRequestOf(principal, params.request_id, body, proofOf(body, request, config)), {
        requestId,
      }),
  });
  addRoute(app, {
    method: 'POST',
    url: '/actions/:request_id/cancel',
    tag: 'Actions',
    summary: 'Cancel a request',
    description:
      'The calling agent withdraws one of its own pending requests: status `cancelled`, resolved_by `agent`, with a ' +
      'receipt, a webhook and an audit entry like any other outcome; the device stops showing it. Cancelling a ' +
      "request already cancelled answers it again; 409 once it is approved, denied or expired; 404 for another agent's.",
    auth: 'agent',
    params: RequestParams,
    body: CancelBody,
    bodyOptional: true,
    response: toolCallEndpoints.cancel.response,
    handler: ({ principal, params, requestId }) =>
      bus.request(toolCallEndpoints.cancel, { agent: principal, id: params.request_id }, { requestId }),
  });
  addRoute(app, {
    method: 'POST',
    url: '/actions/:request_id/deny',
    tag: 'Actions',
    summary: 'Deny a request',
    description:
      'Denies a pending request of the account, with an optional `reason`; `signature` or `webauthn`, with' +
      ' `timestamp`, as for approve. 409 when the request is no longer pending.',
    auth: 'device',
    params: RequestParams,
    body: DenyBody,
    bodyOptional: true,
    response: ep.deny.response,
    handler: ({ principal, params, body, request, requestId }) =>
      bus.request(ep.deny, denyRequestOf(principal, params.request_id, body, proofOf(body, request, config)), {
        requestId,
      }),
  });
}
