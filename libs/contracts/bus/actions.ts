import { z } from 'zod';
import { ById, confidential, defineEndpoint, Empty, ErrorReply } from './envelope.js';
import {
  ActionList,
  ActionView,
  type ApproveBody,
  type BatchApproveBody,
  type BatchDenyBody,
  BatchResults,
  type CreateActionBody,
  Deleted,
  type DenyBody,
  IdempotencyKey,
  type ListActionsQuery,
  PendingList,
  VaultExecutionMetadata,
} from '../http/actions.js';
import {
  AccountCreated,
  AccountView,
  AgentCreated,
  AgentList,
  type CreateAgentBody,
  type CreateDeviceBody,
  DeviceCreated,
  PublicKey,
  PublicKeySet,
  type SetPlanBody,
  type SetPublicKeyBody,
  TotpEnrolled,
} from '../http/identities.js';
import {
  AuthenticationResponse,
  PasskeyCreated,
  PasskeyCreationOptions,
  PasskeyList,
  RegistrationResponse,
  RelyingParty,
} from '../http/passkeys.js';
import { GrantView } from '../http/grants.js';
import {
  type CreateMemberBody,
  Joined,
  MemberCreated,
  MemberList,
  MemberRole,
  MemberView,
  type UpdateMemberBody,
} from '../http/members.js';
import { AuditHead, AuditPage, type AuditQuery, AuditTrail, Jwks } from '../receipts.js';
import { ActionStatus, ActionType, Plan, RiskLevel } from '../enums.js';

/** Who an authenticated agent is; attached by the gateway to every agent message. */
export const AgentPrincipal = z.object({ account_id: z.string(), agent_id: z.string() });
export type AgentPrincipal = z.infer<typeof AgentPrincipal>;

/** A device of an account by its non-secret handle, device_ref (never the device id itself). */
export const DeviceRef = z.object({ account_id: z.string(), device_ref: z.string() });
export type DeviceRef = z.infer<typeof DeviceRef>;

/**
 * Who an authenticated device is: the device, the member it belongs to and that member's role, which the gateway
 * checks every route against (docs/security.md, Roles).
 */
export const DevicePrincipal = DeviceRef.extend({ member_id: z.string(), role: MemberRole });
export type DevicePrincipal = z.infer<typeof DevicePrincipal>;

/**
 * A new action request as the actions service takes it (actions.v2.create): the agent's fields with the public
 * API's defaults applied and null for "not given". Its own shape, so the HTTP body may change without it.
 */
export const NewAction = z.object({
  action_type: ActionType,
  title: z.string(),
  description: z.string().nullable(),
  risk_level: RiskLevel,
  reversible: z.boolean(),
  amount: z.number().nullable(),
  currency: z.string().length(3),
  recipient: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  expires_in_seconds: z.number().int(),
  callback_url: z.string().nullable(),
});
export type NewAction = z.infer<typeof NewAction>;

/** The bus message of a validated POST /actions body. */
export function newActionOf(body: CreateActionBody): NewAction {
  return {
    action_type: body.action_type,
    title: body.title,
    description: body.description ?? null,
    risk_level: body.risk_level,
    reversible: body.reversible,
    amount: body.amount ?? null,
    currency: body.currency,
    recipient: body.recipient ?? null,
    metadata: body.metadata ?? null,
    expires_in_seconds: body.expires_in_seconds,
    callback_url: body.callback_url ?? null,
  };
}

/**
 * How a device proves a decision (docs/api-guide.md, Approving and denying), as it sent it: an ECDSA signature or a passkey
 * assertion over the approval message, with that message's timestamp; null where not given. `relying_party` says
 * where the app is served, for checking a passkey assertion (null without one).
 */
export const DeviceProof = z.object({
  signature: z.string().nullable(),
  timestamp: z.string().nullable(),
  webauthn: AuthenticationResponse.nullable(),
  relying_party: RelyingParty.nullable(),
});
export type DeviceProof = z.infer<typeof DeviceProof>;

/** A standing grant an approval asks for; max_amount in the request's currency, null for no cap. */
export const GrantRequest = z.object({
  duration_seconds: z.number().int(),
  max_amount: z.number().nullable(),
  max_uses: z.number().int().nullable(),
  /** Only tool calls of this tool, session and command prefix (null: any). */
  match: z
    .object({
      tool_name: z.string().nullable(),
      session_id: z.string().nullable(),
      command_prefix: z.string().nullable(),
    })
    .nullable(),
});
export type GrantRequest = z.infer<typeof GrantRequest>;

/** One request of a batch decision, with the content hash the device was shown (null when none). */
export const BatchEntry = z.object({ id: ById, content_hash: z.string().nullable() });
export type BatchEntry = z.infer<typeof BatchEntry>;

/** actions.v2.approve: a device approves one pending request. */
export const ApproveRequest = z.object({
  device: DevicePrincipal,
  id: ById,
  proof: DeviceProof,
  totp_code: z.string().nullable(),
  content_hash: z.string().nullable(),
  payment_method: z.literal('wallet_pay').nullable(),
  grant: GrantRequest.nullable(),
  /** Approve with changes: the tool input the holder edited (null: as asked). */
  updated_input: z.record(z.string(), z.unknown()).nullable(),
});
export type ApproveRequest = z.infer<typeof ApproveRequest>;

/** actions.v2.deny: a device denies one pending request. */
export const DenyRequest = z.object({
  device: DevicePrincipal,
  id: ById,
  proof: DeviceProof,
  reason: z.string().nullable(),
});
export type DenyRequest = z.infer<typeof DenyRequest>;

// A batch decision: the requests in the order sent, one proof for all of them.
const BatchDecision = z.object({ device: DevicePrincipal, requests: z.array(BatchEntry), proof: DeviceProof });

/** actions.v2.approve_many: one TOTP code for the batch too. */
export const BatchApproveRequest = BatchDecision.extend({ totp_code: z.string().nullable() });
export type BatchApproveRequest = z.infer<typeof BatchApproveRequest>;

/** actions.v2.deny_many: one reason for the batch. */
export const BatchDenyRequest = BatchDecision.extend({ reason: z.string().nullable() });
export type BatchDenyRequest = z.infer<typeof BatchDenyRequest>;

/** The proof of a validated approve or deny body; `relyingParty` is where the app is served (read only with a passkey). */
export function deviceProofOf(
  body: Pick<ApproveBody, 'signature' | 'timestamp' | 'webauthn'>,
  relyingParty: () => RelyingParty,
): DeviceProof {
  return {
    signature: body.signature ?? null,
    timestamp: body.timestamp ?? null,
    webauthn: body.webauthn ?? null,
    relying_party: body.webauthn ? relyingParty() : null,
  };
}

/** The bus message of a validated POST /actions/{id}/approve body. */
export function approveRequestOf(
  device: DevicePrincipal,
  id: string,
  body: ApproveBody,
  proof: DeviceProof,
): ApproveRequest {
  const grant = body.grant
    ? {
        duration_seconds: body.grant.duration_seconds,
        max_amount: body.grant.max_amount ?? null,
        max_uses: body.grant.max_uses ?? null,
        match: body.grant.match
          ? {
              tool_name: body.grant.match.tool_name ?? null,
              session_id: body.grant.match.session_id ?? null,
              command_prefix: body.grant.match.command_prefix ?? null,
            }
          : null,
      }
    : null;
  return {
    device,
    id,
    proof,
    totp_code: body.totp_code ?? null,
    content_hash: body.content_hash ?? null,
    payment_method: body.payment_method ?? null,
    grant,
    updated_input: body.updated_input ?? null,
  };
}

/** The bus message of a validated POST /actions/{id}/deny body. */
export function denyRequestOf(device: DevicePrincipal, id: string, body: DenyBody, proof: DeviceProof): DenyRequest {
  return { device, id, proof, reason: body.reason ?? null };
}

const batchEntriesOf = (body: BatchApproveBody | BatchDenyBody) =>
  body.requests.map((r) => ({ id: r.id, content_hash: r.content_hash ?? null }));

/** The bus message of a validated POST /actions/approve body. */
export function batchApproveRequestOf(
  device: DevicePrincipal,
  body: BatchApproveBody,
  proof: DeviceProof,
): BatchApproveRequest {
  return { device, requests: batchEntriesOf(body), proof, totp_code: body.totp_code ?? null };
}

/** The bus message of a validated POST /actions/deny body. */
export function batchDenyRequestOf(device: DevicePrincipal, body: BatchDenyBody, proof: DeviceProof): BatchDenyRequest {
  return { device, requests: batchEntriesOf(body), proof, reason: body.reason ?? null };
}

/**
 * A new device as the actions service takes it (actions.v2.create_account, create_device): its name and public key
 * (a PEM/base64 string or a P-256 JWK, as the shared contract has it), null for "not given".
 */
export const NewDevice = z.object({ name: z.string().nullable(), public_key: PublicKey.nullable() });
export type NewDevice = z.infer<typeof NewDevice>;

/** The new device of a validated POST /accounts or POST /devices body. */
export function newDeviceOf(body: CreateDeviceBody): NewDevice {
  return { name: body.device_name ?? null, public_key: body.public_key ?? null };
}

/** actions.v2.create_account: a new account with its first device. */
export const NewAccount = z.object({ first_device: NewDevice });
export type NewAccount = z.infer<typeof NewAccount>;

/** The bus message of a validated POST /accounts body. */
export function newAccountOf(body: CreateDeviceBody): NewAccount {
  return { first_device: newDeviceOf(body) };
}

/** actions.v2.create_device: a device adds another device to its account. */
export const AddDeviceRequest = z.object({ device: DevicePrincipal, new_device: NewDevice });
export type AddDeviceRequest = z.infer<typeof AddDeviceRequest>;

/** The bus message of a validated POST /devices body. */
export function addDeviceRequestOf(device: DevicePrincipal, body: CreateDeviceBody): AddDeviceRequest {
  return { device, new_device: newDeviceOf(body) };
}

/** actions.v2.create_agent: a device adds an agent, by name, to its account. */
export const NewAgent = z.object({ device: DevicePrincipal, name: z.string() });
export type NewAgent = z.infer<typeof NewAgent>;

/** The bus message of a validated POST /agents body. */
export function newAgentOf(device: DevicePrincipal, body: CreateAgentBody): NewAgent {
  return { device, name: body.name };
}

/** actions.v2.set_public_key: a device sets (or replaces) its own signing key. */
export const SetPublicKeyRequest = z.object({ device: DevicePrincipal, public_key: PublicKey });
export type SetPublicKeyRequest = z.infer<typeof SetPublicKeyRequest>;

/** The bus message of a validated PUT /device/public-key body. */
export function setPublicKeyRequestOf(device: DevicePrincipal, body: SetPublicKeyBody): SetPublicKeyRequest {
  return { device, public_key: body.public_key };
}

/** actions.v2.set_plan: a device changes its account's plan. */
export const SetPlanRequest = z.object({ device: DevicePrincipal, plan: Plan });
export type SetPlanRequest = z.infer<typeof SetPlanRequest>;

/** The bus message of a validated POST /account/plan body. */
export function setPlanRequestOf(device: DevicePrincipal, body: SetPlanBody): SetPlanRequest {
  return { device, plan: body.plan };
}

/** actions.v2.list: one page of an agent's requests, newest first; null filters match everything. */
export const ListActionsRequest = z.object({
  agent: AgentPrincipal,
  limit: z.number().int().min(1),
  status: ActionStatus.nullable(),
  action_type: ActionType.nullable(),
  cursor: z.string().nullable(),
});
export type ListActionsRequest = z.infer<typeof ListActionsRequest>;

/** The bus message of a validated GET /actions query (its default page size applied). */
export function listActionsRequestOf(agent: AgentPrincipal, query: ListActionsQuery): ListActionsRequest {
  return {
    agent,
    limit: query.limit,
    status: query.status ?? null,
    action_type: query.action_type ?? null,
    cursor: query.cursor ?? null,
  };
}

/**
 * actions.v2.register_passkey: the browser's WebAuthn registration (a protocol object, kept in the shared
 * contract's shape), with where the app is served.
 */
export const RegisterPasskeyRequest = z.object({
  device: DevicePrincipal,
  relying_party: RelyingParty,
  registration: RegistrationResponse,
});
export type RegisterPasskeyRequest = z.infer<typeof RegisterPasskeyRequest>;

/** The bus message of a validated POST /device/passkeys body. */
export function registerPasskeyRequestOf(
  device: DevicePrincipal,
  relyingParty: RelyingParty,
  body: RegistrationResponse,
): RegisterPasskeyRequest {
  return { device, relying_party: relyingParty, registration: body };
}

/** actions.v2.audit_page: one page of the account's audit chain, the events after sequence `after`. */
export const AuditPageRequest = z.object({
  device: DevicePrincipal,
  after: z.number().int().min(0),
  limit: z.number().int().min(1),
});
export type AuditPageRequest = z.infer<typeof AuditPageRequest>;

/** The bus message of a validated GET /audit query (its defaults applied). */
export function auditPageRequestOf(device: DevicePrincipal, query: AuditQuery): AuditPageRequest {
  return { device, after: query.after, limit: query.limit };
}

/** actions.create_member: a device of an owner or admin invites a person. */
export const NewMember = z.object({
  device: DevicePrincipal,
  name: z.string(),
  email: z.string().nullable(),
  role: MemberRole,
  /** Where the device app is served, for the invite's email link (absent from older gateways: no email). */
  app_origin: z.string().optional(),
});
export type NewMember = z.infer<typeof NewMember>;

/** The bus message of a validated POST /members body. */
export function newMemberOf(device: DevicePrincipal, body: CreateMemberBody, appOrigin?: string): NewMember {
  return {
    device,
    name: body.name,
    email: body.email ?? null,
    role: body.role,
    ...(appOrigin ? { app_origin: appOrigin } : {}),
  };
}

/** actions.join_member: a new device joins with an invite's code (no device yet). */
export const JoinRequest = z.object({ code: z.string(), device_name: z.string().nullable() });
export type JoinRequest = z.infer<typeof JoinRequest>;

/** actions.update_member: the fields to change, absent (undefined) where unchanged; email null clears it. */
export const MemberChange = z.object({
  device: DevicePrincipal,
  member_id: ById,
  name: z.string().optional(),
  email: z.string().nullable().optional(),
  role: MemberRole.optional(),
});
export type MemberChange = z.infer<typeof MemberChange>;

/** The bus message of a validated PATCH /members/{member_id} body. */
export function memberChangeOf(device: DevicePrincipal, memberId: string, body: UpdateMemberBody): MemberChange {
  return {
    device,
    member_id: memberId,
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.email !== undefined ? { email: body.email } : {}),
    ...(body.role !== undefined ? { role: body.role } : {}),
  };
}

/** One vault execution attempt's claim on an approved request: claim_id is the attempt's own random id. */
export const ExecutionClaim = z.object({ agent: AgentPrincipal, request_id: ById, claim_id: ById });
export type ExecutionClaim = z.infer<typeof ExecutionClaim>;

/** What the actions service hands the vault executor for an approved request it has just marked as executing. */
export const ClaimedExecution = z.object({
  request_id: z.string(),
  account_id: z.string(),
  agent_id: z.string(),
  content_hash: z.string(),
  metadata: VaultExecutionMetadata,
});
export type ClaimedExecution = z.infer<typeof ClaimedExecution>;

export const executionOutcomes = ['succeeded', 'refused', 'failed'] as const;

/** One execution attempt for the request's audit trail: never the credential, never the upstream body. */
export const ExecutionRecord = z.object({
  agent: AgentPrincipal,
  request_id: ById,
  outcome: z.enum(executionOutcomes),
  target_host: z.string().max(300).nullable(),
  status_code: z.number().int().nullable(),
  error_status: z.number().int().nullable(),
  detail: z.string().max(500).nullable(),
  latency_ms: z.number().int().min(0),
});
export type ExecutionRecord = z.infer<typeof ExecutionRecord>;

/** The notifier asks the actions service, which alone holds the agent's secret, to sign one webhook attempt. */
export const SignWebhookRequest = z.object({
  agent_id: ById,
  request_id: ById,
  webhook_id: z.string().regex(/^msg_[A-Za-z0-9]+$/),
  timestamp: z.number().int().min(0),
  body: z.string().max(64 * 1024),
});
export type SignWebhookRequest = z.infer<typeof SignWebhookRequest>;

/** One delivery attempt of a webhook, for the request's audit trail. */
export const WebhookAttempt = z.object({
  request_id: ById,
  webhook_id: z.string().regex(/^msg_[A-Za-z0-9]+$/),
  attempt: z.number().int().min(1),
  outcome: z.enum(['delivered', 'retrying', 'failed']),
  status_code: z.number().int().nullable(),
  latency_ms: z.number().int().min(0),
  error: z.string().max(500).nullable(),
  next_attempt_at: z.string().nullable(),
});
export type WebhookAttempt = z.infer<typeof WebhookAttempt>;

/**
 * The answer to a create: the request, or (replayed) the answer an earlier create with the same Idempotency-Key
 * got, which may have been an error; `replayed` becomes the Idempotent-Replayed header.
 */
export const CreateOutcome = z.union([
  z.object({ replayed: z.boolean(), action: ActionView }),
  z.object({ replayed: z.literal(true), error: ErrorReply }),
]);
export type CreateOutcome = z.infer<typeof CreateOutcome>;

/** The actions service's message catalog. */
export const actionsEndpoints = {
  health: defineEndpoint('actions', 'health', Empty, z.object({ ok: z.literal(true) })),
  authenticateAgent: defineEndpoint(
    'actions',
    'authenticate_agent',
    z.object({ api_key: z.string().max(200) }),
    AgentPrincipal,
  ),
  authenticateDevice: defineEndpoint(
    'actions',
    'authenticate_device',
    z.object({ device_id: z.string().max(200) }),
    DevicePrincipal,
  ),
  // v2 (identities, account, list, passkey registration, audit page): messages of their own; v1 carried the HTTP
  // bodies and queries.
  createAccount: confidential(defineEndpoint('actions', 'create_account', NewAccount, AccountCreated, 2)),
  createDevice: confidential(defineEndpoint('actions', 'create_device', AddDeviceRequest, DeviceCreated, 2)),
  createAgent: confidential(defineEndpoint('actions', 'create_agent', NewAgent, AgentCreated, 2)),
  // Listing needs only the account: the identity service asks it for a connection's consenting device.
  listAgents: defineEndpoint('actions', 'list_agents', z.object({ device: DeviceRef }), AgentList),
  deleteAgent: defineEndpoint(
    'actions',
    'delete_agent',
    z.object({ device: DevicePrincipal, agent_id: ById }),
    Deleted,
  ),
  setPublicKey: defineEndpoint('actions', 'set_public_key', SetPublicKeyRequest, PublicKeySet, 2),
  enrollTotp: confidential(
    defineEndpoint('actions', 'enroll_totp', z.object({ device: DevicePrincipal }), TotpEnrolled),
  ),
  getAccount: defineEndpoint('actions', 'get_account', z.object({ device: DevicePrincipal }), AccountView),
  setPlan: defineEndpoint('actions', 'set_plan', SetPlanRequest, AccountView, 2),
  // v2: the request is a NewAction of its own (v1 carried the HTTP body).
  create: defineEndpoint(
    'actions',
    'create',
    // action_id: the id the gateway chose for a create without an Idempotency-Key, the same on the bus's resend, so
    // that the resend finds the request a first send stored instead of storing a second one.
    z.object({
      agent: AgentPrincipal,
      action: NewAction,
      idempotency_key: IdempotencyKey.optional(),
      action_id: ById.optional(),
    }),
    CreateOutcome,
    2,
  ),
  get: defineEndpoint('actions', 'get', z.object({ agent: AgentPrincipal, id: ById }), ActionView),
  list: defineEndpoint('actions', 'list', ListActionsRequest, ActionList, 2),
  pending: defineEndpoint('actions', 'pending', z.object({ device: DevicePrincipal }), PendingList),
  // v2 (decisions): messages of their own; v1 carried the HTTP bodies.
  approve: defineEndpoint('actions', 'approve', ApproveRequest, ActionView, 2),
  deny: defineEndpoint('actions', 'deny', DenyRequest, ActionView, 2),
  // Batches: one proof for all, each request resolved on its own.
  approveMany: confidential(defineEndpoint('actions', 'approve_many', BatchApproveRequest, BatchResults, 2)),
  denyMany: confidential(defineEndpoint('actions', 'deny_many', BatchDenyRequest, BatchResults, 2)),
  // Revoking a standing grant here, so that its audit entry joins the trail of the request it came from.
  revokeGrant: defineEndpoint(
    'actions',
    'revoke_grant',
    z.object({ device: DevicePrincipal, grant_id: ById }),
    GrantView,
  ),
  passkeyOptions: defineEndpoint(
    'actions',
    'passkey_options',
    z.object({ device: DevicePrincipal, relying_party: RelyingParty }),
    PasskeyCreationOptions,
  ),
  registerPasskey: defineEndpoint('actions', 'register_passkey', RegisterPasskeyRequest, PasskeyCreated, 2),
  listPasskeys: defineEndpoint('actions', 'list_passkeys', z.object({ device: DevicePrincipal }), PasskeyList),
  deletePasskey: defineEndpoint(
    'actions',
    'delete_passkey',
    z.object({ device: DevicePrincipal, passkey_id: ById }),
    Deleted,
  ),
  // A vault execution: the executor claims the approved request once, then records how the attempt went.
  // v2: a claim names itself (claim_id), so the executor can repeat a claim whose answer was lost and get its own
  // claim back, and a release gives back only its own claim.
  claimExecution: defineEndpoint('actions', 'claim_execution', ExecutionClaim, ClaimedExecution, 2),
  recordExecution: defineEndpoint(
    'actions',
    'record_execution',
    ExecutionRecord,
    z.object({ recorded: z.literal(true) }),
  ),
  // A claim whose call was refused before the upstream was contacted: the approval stays usable.
  releaseExecution: defineEndpoint(
    'actions',
    'release_execution',
    ExecutionClaim,
    z.object({ released: z.boolean() }),
    2,
  ),

  signWebhook: defineEndpoint('actions', 'sign_webhook', SignWebhookRequest, z.object({ signature: z.string() })),
  recordWebhookAttempt: defineEndpoint(
    'actions',
    'record_webhook_attempt',
    WebhookAttempt,
    z.object({ recorded: z.boolean() }),
  ),

  // Verifiable decisions (docs/security.md): the public receipt keys, and an account's sealed audit chain.
  jwks: defineEndpoint('actions', 'jwks', Empty, Jwks),
  auditPage: defineEndpoint('actions', 'audit_page', AuditPageRequest, AuditPage, 2),
  auditTrail: defineEndpoint('actions', 'audit_trail', z.object({ device: DevicePrincipal, id: ById }), AuditTrail),
  auditHead: defineEndpoint('actions', 'audit_head', z.object({ device: DevicePrincipal }), AuditHead),

  // Members of the account (docs/api-guide.md, Teams): an invite's code and a joined device's id are in their answers
  // only, kept per call, sealed.
  createMember: confidential(defineEndpoint('actions', 'create_member', NewMember, MemberCreated)),
  joinMember: confidential(defineEndpoint('actions', 'join_member', JoinRequest, Joined)),
  listMembers: defineEndpoint('actions', 'list_members', z.object({ device: DevicePrincipal }), MemberList),
  // The current members a routing names (member ids and `role:<role>`), for the notifier's pushes to approvers.
  membersNamed: defineEndpoint(
    'actions',
    'members_named',
    z.object({ account_id: z.string(), refs: z.array(z.string()).max(100) }),
    z.object({ member_ids: z.array(z.string()) }),
  ),
  updateMember: defineEndpoint('actions', 'update_member', MemberChange, MemberView),
  removeMember: defineEndpoint(
    'actions',
    'remove_member',
    z.object({ device: DevicePrincipal, member_id: ById }),
    Deleted,
  ),
} as const;
