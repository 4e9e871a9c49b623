import { z } from 'zod';
import { StoredText } from '../validation.js';
import { ActionStatus, ActionType, RiskLevel } from '../enums.js';
import { AuthenticationResponse } from './passkeys.js';
import { MAX_TOOL_INPUT_BYTES } from './hooks.js';

export const fieldLimits = {
  title: 200,
  description: 2000,
  recipient: 500,
  metadataKeys: 20,
  metadataBytes: 8192,
  denyReason: 500,
  callbackUrl: 2048,
  maxAmount: 1_000_000_000,
  listLimitMax: 200,
  listLimitDefault: 50,
} as const;

const knownCurrencies = new Set(Intl.supportedValuesOf('currency'));

export const Currency = z
  .string()
  .regex(/^[A-Za-z]{3}$/, 'must be a three-letter ISO 4217 code')
  .transform((c) => c.toUpperCase())
  .refine((c) => knownCurrencies.has(c), 'is not an ISO 4217 currency code');

export const Metadata = z
  .record(StoredText().max(200), z.unknown())
  .refine(
    (m) => Object.keys(m).length <= fieldLimits.metadataKeys,
    `must have at most ${fieldLimits.metadataKeys} keys`,
  )
  .refine(
    (m) => Buffer.byteLength(JSON.stringify(m)) <= fieldLimits.metadataBytes,
    `must serialize to at most ${fieldLimits.metadataBytes} bytes of JSON`,
  );

export const HttpUrl = StoredText()
  .max(fieldLimits.callbackUrl)
  .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), 'must be an absolute http(s) URL');

/** Body of POST /actions. Null stands for "not given" so clients may send explicit nulls. */
export const CreateActionBody = z.object({
  action_type: ActionType,
  title: StoredText().trim().min(1, 'must not be empty').max(fieldLimits.title),
  description: StoredText().max(fieldLimits.description).nullish(),
  risk_level: RiskLevel.nullish().transform((r) => r ?? 'medium'),
  reversible: z
    .boolean()
    .nullish()
    .transform((r) => r ?? true),
  amount: z.number().positive('must be positive').max(fieldLimits.maxAmount).nullish(),
  currency: Currency.nullish().transform((c) => c ?? 'USD'),
  recipient: StoredText().max(fieldLimits.recipient).nullish(),
  metadata: Metadata.nullish(),
  expires_in_seconds: z
    .number()
    .int()
    .min(30)
    .max(3600)
    .nullish()
    .transform((e) => e ?? 300),
  callback_url: HttpUrl.nullish(),
});
export type CreateActionBody = z.infer<typeof CreateActionBody>;

/** The Idempotency-Key header of POST /actions: 1–255 printable ASCII characters. */
export const IdempotencyKey = z.string().regex(/^[\x20-\x7e]{1,255}$/, 'must be 1 to 255 printable ASCII characters');

// Methods a vault call may use; CONNECT and TRACE have no place in an API call made on someone's behalf.
export const vaultMethods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
const VaultHeaderName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, 'must be an HTTP header name');
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing NUL in a header value is the point of this check
const HEADER_BREAK = /[\r\n\u0000]/;
const VaultHeaderValue = z
  .string()
  .max(4096)
  .refine((v) => !HEADER_BREAK.test(v), 'must not contain line breaks or NUL');

/** The metadata keys that turn an action into a vault execution request. */
export const VaultExecutionMetadata = z.object({
  vault_execute: z.literal(true),
  service_name: StoredText().min(1).max(200),
  method: StoredText()
    .max(10)
    .refine(
      (m) => (vaultMethods as readonly string[]).includes(m.toUpperCase()),
      `must be one of ${vaultMethods.join(', ')}`,
    ),
  url: HttpUrl,
  headers: z
    .record(VaultHeaderName, VaultHeaderValue)
    .refine((h) => Object.keys(h).length <= 50, 'must have at most 50 headers')
    .nullish(),
  body: z.string().nullish(),
});
export type VaultExecutionMetadata = z.infer<typeof VaultExecutionMetadata>;

export const SpendingLimitExceeded = z.object({
  period: z.string(),
  limit: z.number(),
  spent: z.number(),
  requested: z.number(),
});

/**
 * One device's approval of a request under a quorum rule, with the member it belongs to (null only on approvals made
 * before accounts had members; the quorum counts members).
 */
export const QuorumApproval = z.object({
  device_id: z.string(),
  member_id: z.string().nullable(),
  method: z.string(),
  at: z.string(),
  signed: z.boolean(),
});
export type QuorumApproval = z.infer<typeof QuorumApproval>;

/** How far a request under a quorum rule is: `required` distinct members, the approvals so far. */
export const QuorumView = z.object({ required: z.number().int(), approvals: z.array(QuorumApproval) });
export type QuorumView = z.infer<typeof QuorumView>;

/** The full action object returned by create, get, approve and deny. */
export const ActionView = z.object({
  id: z.string(),
  agent_id: z.string(),
  status: ActionStatus,
  action_type: ActionType,
  title: z.string(),
  description: z.string().nullable(),
  risk_level: RiskLevel,
  reversible: z.boolean(),
  amount: z.number().nullable(),
  amount_cents: z.number().int().nullable(),
  currency: z.string(),
  recipient: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  callback_url: z.string().nullable(),
  content_hash: z.string().nullable(),
  rule_applied: z.string().nullable(),
  resolved_by: z.string().nullable(),
  resolved_at: z.string().nullable(),
  reason: z.string().nullable(),
  created_at: z.string(),
  expires_at: z.string(),
  /** True when a passkey verified the holder (WebAuthn user verification) for the decision; passkey_id says which. */
  user_verified: z.boolean(),
  passkey_id: z.string().nullable(),
  spending_limit_exceeded: SpendingLimitExceeded.optional(),
  /** The signed receipt (compact JWS, docs/security.md) once the request has left pending; null while pending. */
  receipt: z.string().nullable(),
  /** Under a quorum rule: how many distinct members must approve and the approvals so far; else null. */
  quorum: QuorumView.nullable(),
  /** Approved with changes: the tool input the holder edited, which the agent's tool runs with. */
  updated_input: z.record(z.string(), z.unknown()).optional(),
});
export type ActionView = z.infer<typeof ActionView>;

/** GET /actions: a page of the agent's requests, newest first; `next_cursor` fetches the next page (null at the end). */
export const ActionList = z.object({ actions: z.array(ActionView), next_cursor: z.string().nullable() });
export type ActionList = z.infer<typeof ActionList>;

/** Longest held wait of GET /actions/{id}?wait=S, in seconds. */
export const MAX_WAIT_SECONDS = 60;

/** Query of GET /actions/{id}: `wait` holds the answer while the request is pending, for at most that many seconds. */
export const GetActionQuery = z.object({
  wait: z.coerce
    .number()
    .int('must be a whole number of seconds')
    .min(1, `must be 1 to ${MAX_WAIT_SECONDS} seconds`)
    .max(MAX_WAIT_SECONDS, `must be 1 to ${MAX_WAIT_SECONDS} seconds`)
    .optional()
    .describe(
      'Hold the answer while the request is pending: until it is resolved or expires, or this many seconds pass',
    ),
});
export type GetActionQuery = z.infer<typeof GetActionQuery>;

/** Query of GET /actions. */
export const ListActionsQuery = z.object({
  limit: z.coerce
    .number()
    .int('must be a whole number')
    .min(1)
    .max(fieldLimits.listLimitMax)
    .default(fieldLimits.listLimitDefault),
  status: ActionStatus.optional(),
  action_type: ActionType.optional(),
  /** The `next_cursor` of the previous page, as given: the page continues after the last request it showed. */
  cursor: StoredText().min(1).max(200).optional(),
});
export type ListActionsQuery = z.infer<typeof ListActionsQuery>;

/** One entry of GET /pending: everything the holder needs to judge the request, from the action and its agent. */
export const PendingItem = ActionView.pick({
  id: true,
  agent_id: true,
  action_type: true,
  title: true,
  description: true,
  risk_level: true,
  reversible: true,
  amount: true,
  amount_cents: true,
  currency: true,
  recipient: true,
  metadata: true,
  content_hash: true,
  status: true,
  created_at: true,
  expires_at: true,
  quorum: true,
}).extend({
  agent_name: z.string(),
  /**
   * Only on a request its rules routed (docs/api-guide.md, Routing and escalation): who it waits for (member ids,
   * `role:<role>`; null: any approver), when it escalates and to whom, and when it did.
   */
  routing: z
    .object({
      approvers: z.array(z.string()).nullable(),
      escalate_at: z.string().nullable(),
      escalate_to: z.array(z.string()).nullable(),
      escalated_at: z.string().nullable(),
    })
    .optional(),
});
export type PendingItem = z.infer<typeof PendingItem>;
export const PendingList = z.object({ requests: z.array(PendingItem) });
export type PendingList = z.infer<typeof PendingList>;

// How a device proves a decision (docs/api-guide.md, Approving and denying): an ECDSA signature or a passkey assertion over
// the approval message, with the timestamp that message carries.
const Signature = {
  signature: StoredText().min(1).max(1024).nullish(),
  timestamp: StoredText().min(1).max(64).nullish(),
  webauthn: AuthenticationResponse.nullish(),
};

/** Shortest and longest standing grant: one minute to thirty days. */
export const grantLimits = { minSeconds: 60, maxSeconds: 2_592_000, maxUses: 1_000_000 } as const;

/**
 * `grant.match` of an approve ("allow for the rest of the session"): the grant approves only tool calls with this
 * tool, in this session, whose shell command starts with this prefix (each when given). At least one is required.
 */
export const GrantMatch = z
  .object({
    tool_name: StoredText().min(1).max(200).nullish(),
    session_id: StoredText().min(1).max(200).nullish(),
    command_prefix: StoredText().min(1).max(500).nullish(),
  })
  .refine(
    (m) => Boolean(m.tool_name || m.session_id || m.command_prefix),
    'must name a tool_name, session_id or command_prefix',
  );
export type GrantMatch = z.infer<typeof GrantMatch>;

/**
 * `grant` of an approve: approve similar requests (same agent, action type, recipient, currency) for
 * `duration_seconds`, up to `max_amount` in total (in the request's currency) and `max_uses` requests.
 */
export const GrantTerms = z.object({
  duration_seconds: z
    .number()
    .int('must be a whole number of seconds')
    .min(grantLimits.minSeconds, `must be ${grantLimits.minSeconds} to ${grantLimits.maxSeconds} seconds`)
    .max(grantLimits.maxSeconds, `must be ${grantLimits.minSeconds} to ${grantLimits.maxSeconds} seconds`),
  max_amount: z
    .number()
    .positive('must be positive')
    .max(fieldLimits.maxAmount)
    .refine((n) => Math.round(n * 100) >= 1, 'must be at least 0.01')
    .nullish(),
  max_uses: z.number().int('must be a whole number').min(1).max(grantLimits.maxUses).nullish(),
  match: GrantMatch.nullish(),
});
export type GrantTerms = z.infer<typeof GrantTerms>;

/** Body of POST /actions/{id}/approve. */
export const ApproveBody = z.object({
  grant: GrantTerms.nullish(),
  totp_code: StoredText()
    .regex(/^\d{6,8}$/, 'must be 6 to 8 digits')
    .nullish(),
  content_hash: StoredText().max(128).nullish(),
  payment_method: z.enum(['wallet_pay']).nullish(),
  /**
   * Approve with changes: the tool input the agent's tool runs with instead of the one it asked for (only for a
   * request from a client that takes an edited input, Claude Code).
   */
  updated_input: z
    .record(z.string(), z.unknown())
    .refine(
      (i) => Buffer.byteLength(JSON.stringify(i)) <= MAX_TOOL_INPUT_BYTES,
      `must serialize to at most ${MAX_TOOL_INPUT_BYTES} bytes of JSON`,
    )
    .nullish(),
  ...Signature,
});
export type ApproveBody = z.infer<typeof ApproveBody>;

/** Body of POST /actions/{id}/deny. */
export const DenyBody = z.object({
  reason: StoredText().max(fieldLimits.denyReason).nullish(),
  ...Signature,
});
export type DenyBody = z.infer<typeof DenyBody>;

/** Most requests one batch approve or deny may carry. */
export const MAX_BATCH_REQUESTS = 50;

/** One request of a batch: its id, and its content hash as the device was shown it (required for vault requests). */
export const BatchItem = z.object({
  id: StoredText().min(1).max(100),
  content_hash: StoredText().max(128).nullish(),
});
export type BatchItem = z.infer<typeof BatchItem>;

const BatchRequests = z
  .array(BatchItem)
  .min(1, `must list 1 to ${MAX_BATCH_REQUESTS} requests`)
  .max(MAX_BATCH_REQUESTS, `must list 1 to ${MAX_BATCH_REQUESTS} requests`);

/**
 * Body of POST /actions/approve: several requests approved with one proof; a signature or passkey
 * assertion covers the batch message (aa-approval-batch-v1), a TOTP code is used once for the whole batch.
 */
export const BatchApproveBody = z.object({
  requests: BatchRequests,
  totp_code: ApproveBody.shape.totp_code,
  ...Signature,
});
export type BatchApproveBody = z.infer<typeof BatchApproveBody>;

/** Body of POST /actions/deny: several requests denied with one proof and one optional reason. */
export const BatchDenyBody = z.object({
  requests: BatchRequests,
  reason: DenyBody.shape.reason,
  ...Signature,
});
export type BatchDenyBody = z.infer<typeof BatchDenyBody>;

/**
 * What became of one request of a batch: `status` is the HTTP status that request alone would have had (200 on
 * success, with the action object after the change; 404, 409, 403 … with `code` and `detail` otherwise).
 */
export const BatchResult = z.object({
  id: z.string(),
  status: z.number().int(),
  code: z.string().optional(),
  detail: z.string().optional(),
  action: ActionView.optional(),
});
export type BatchResult = z.infer<typeof BatchResult>;

/** Answer of a batch approve or deny: one result per request, in the order sent. */
export const BatchResults = z.object({ results: z.array(BatchResult) });
export type BatchResults = z.infer<typeof BatchResults>;

export const Deleted = z.object({ deleted: z.literal(true), id: z.string() });
export type Deleted = z.infer<typeof Deleted>;
