import { AppError } from './app-error.js';

/** One condition the service can refuse with: a stable code, its HTTP status and how its detail is written. */
export interface CatalogueEntry<A extends unknown[] = never[]> {
  (...args: A): AppError;
  readonly code: string;
  readonly status: number;
}

function entry<A extends unknown[]>(code: string, status: number, detail: (...args: A) => string): CatalogueEntry<A> {
  const make = (...args: A) => new AppError(status, code, detail(...args));
  return Object.assign(make, { code, status });
}

const quotaText = (quota: number) =>
  `Monthly quota of ${quota} actions on the free plan is used up; it renews on the 1st of next month (UTC), ` +
  'or switch to the unlimited plan with POST /account/plan {"plan": "unlimited"}';

/**
 * The error catalogue: every refusal of the service, one entry per condition, thrown by name
 * (`throw errors.actionNotPending(status)`) and mapped to HTTP once, in the gateway. docs/errors.md lists them.
 */
export const errors = {
  // 400: the request itself is wrong; the detail names the field.
  invalidRequest: entry('invalid_request', 400, (fieldAndReason: string) => fieldAndReason),
  malformedJson: entry('malformed_json', 400, (reason: string) => `Malformed JSON body: ${reason}`),
  malformedHttp: entry('malformed_http', 400, () => 'Malformed HTTP request'),
  invalidContentLength: entry('invalid_content_length', 400, () => 'Content-Length does not match the body'),
  invalidContentType: entry('invalid_content_type', 400, () => 'Content-Type header is invalid'),
  invalidUrlEncoding: entry(
    'invalid_url_encoding',
    400,
    () => 'The URL contains a segment that is not valid percent-encoding',
  ),
  // Refusals of the HTTP framework itself that have no entry of their own keep the framework's status and text.
  requestRefused: entry('request_refused', 400, (reason: string) => reason),
  malformedMessage: entry('malformed_message', 400, () => 'Message is not valid JSON'),
  invalidCursor: entry('invalid_cursor', 400, () => 'cursor: is not a next_cursor this service gave out'),
  nestedTooDeeply: entry(
    'nested_too_deeply',
    400,
    (field: string, max: number) => `${field}: is nested deeper than ${max} levels`,
  ),
  idempotencyKeyInvalid: entry(
    'idempotency_key_invalid',
    400,
    () => 'Idempotency-Key: must be 1 to 255 printable ASCII characters',
  ),
  amountTooSmall: entry('amount_too_small', 400, () => 'amount: must be at least 0.01'),
  invalidPolicy: entry('invalid_policy', 400, (problem: string) => `cedar: ${problem}`),
  callbackUrlNotHttps: entry('callback_url_not_https', 400, () => 'callback_url: must be an https URL'),
  vaultRequestNotSystem: entry(
    'vault_request_not_system',
    400,
    () => "action_type: must be 'system' for a vault execution request",
  ),
  walletPayNeedsAmount: entry(
    'wallet_pay_needs_amount',
    400,
    () => 'payment_method: wallet_pay needs a request with an amount',
  ),
  invalidPublicKey: entry('invalid_public_key', 400, (reason: string) => `public_key: ${reason}`),
  notVaultRequest: entry(
    'not_vault_request',
    400,
    (id: string) => `Action request '${id}' is not a vault execution request`,
  ),
  webhookOfOtherRequest: entry('webhook_of_other_request', 400, () => 'body: must be the webhook of request_id'),
  passkeyNeedsDomain: entry(
    'passkey_needs_domain',
    400,
    (host: string) =>
      `Passkeys need the app to be served from a domain name (e.g. localhost), not '${host}'; or set WEBAUTHN_RP_ID`,
  ),
  // OAuth 2.1 (RFC 6749, 7591, 8707): the codes are the RFCs' own, answered as {"error", "error_description"}.
  oauthInvalidGrant: entry('invalid_grant', 400, (reason: string) => reason),
  oauthUnsupportedGrantType: entry(
    'unsupported_grant_type',
    400,
    (given: string) => `grant_type '${given}' is not supported: use authorization_code or refresh_token`,
  ),
  oauthUnsupportedResponseType: entry(
    'unsupported_response_type',
    400,
    () => "response_type: must be 'code' (the authorization code flow with PKCE)",
  ),
  oauthInvalidTarget: entry(
    'invalid_target',
    400,
    (given: string, served: string) => `resource '${given}' is not served here; tokens are for ${served}`,
  ),
  oauthInvalidRedirectUri: entry('invalid_redirect_uri', 400, (reason: string) => `redirect_uris: ${reason}`),
  oauthInvalidClientMetadata: entry('invalid_client_metadata', 400, (reason: string) => reason),
  // OpenID Connect CIBA (Client-Initiated Backchannel Authentication) with rich authorization requests (RFC 9396).
  cibaInvalidScope: entry('invalid_scope', 400, () => "scope: must include 'openid'"),
  cibaInvalidAuthorizationDetails: entry('invalid_authorization_details', 400, (reason: string) => reason),
  cibaAuthorizationPending: entry(
    'authorization_pending',
    400,
    () => 'The account holder has not answered yet; poll again after the interval',
  ),
  cibaSlowDown: entry(
    'slow_down',
    400,
    (interval: number) => `Polled faster than the interval; wait at least ${interval} s between polls from now on`,
  ),
  cibaAccessDenied: entry('access_denied', 400, (status: string) => `The request was not approved: it was ${status}`),
  cibaExpiredToken: entry(
    'expired_token',
    400,
    () => 'The auth_req_id has expired before the account holder answered; start a new request',
  ),
  notificationEndpointNotHttps: entry(
    'notification_endpoint_not_https',
    400,
    () => 'backchannel_client_notification_endpoint: must be an https URL without a fragment',
  ),

  // 401: who is calling is unknown.
  apiKeyMissing: entry('api_key_missing', 401, () => 'Missing X-API-Key header'),
  apiKeyInvalid: entry('api_key_invalid', 401, () => 'Invalid API key'),
  deviceIdMissing: entry('device_id_missing', 401, () => 'Missing X-Device-Id header'),
  deviceIdInvalid: entry('device_id_invalid', 401, () => 'Invalid device ID'),
  notAuthenticated: entry('not_authenticated', 401, () => 'Not authenticated'),
  oauthInvalidClient: entry('invalid_client', 401, (reason: string) => reason),
  bearerTokenMissing: entry(
    'bearer_token_missing',
    401,
    () => 'Missing Authorization: Bearer header: an agent API key (aa_…) or an OAuth access token',
  ),
  accessTokenInvalid: entry('access_token_invalid', 401, () => 'Invalid or revoked access token'),
  accessTokenExpired: entry('access_token_expired', 401, () => 'The access token has expired: refresh it'),
  accessTokenWrongResource: entry(
    'access_token_wrong_resource',
    401,
    (served: string) => `The access token was issued for another resource, not ${served}`,
  ),
  signInRefused: entry('sign_in_refused', 401, (why: string) => `Sign-in refused: ${why}`),
  signInTicketInvalid: entry(
    'sign_in_ticket_invalid',
    401,
    () => 'This sign-in is unknown, used or expired: sign in again',
  ),

  // 402
  quotaExceeded: entry('quota_exceeded', 402, quotaText),

  // 403: known caller, refused.
  deviceSignatureInvalid: entry('device_signature_invalid', 403, (reason: string) => reason),
  contentHashRequired: entry(
    'content_hash_required',
    403,
    () => 'content_hash is required to approve a vault execution request',
  ),
  contentHashMismatch: entry('content_hash_mismatch', 403, (at: 'approval' | 'execution') =>
    at === 'approval'
      ? 'content_hash does not match the request (content hash mismatch)'
      : 'The call differs from the approved one (content hash mismatch)',
  ),
  passkeyRequired: entry(
    'passkey_required',
    403,
    () => 'This device has a passkey: approve and deny must carry webauthn (a passkey assertion) and timestamp',
  ),
  passkeyAssertionInvalid: entry('passkey_assertion_invalid', 403, (reason: string) => `webauthn: ${reason}`),
  passkeyRegistrationInvalid: entry(
    'passkey_registration_invalid',
    403,
    (reason: string) => `Passkey registration refused: ${reason}`,
  ),
  totpNotConfigured: entry('totp_not_configured', 403, () => 'TOTP is not configured for this account'),
  totpLocked: entry(
    'totp_locked',
    403,
    (seconds: number) => `Too many wrong TOTP codes: TOTP approval is locked for this account for ${seconds} s`,
  ),
  totpInvalid: entry('totp_invalid', 403, () => 'Invalid TOTP code'),
  totpReused: entry('totp_reused', 403, () => 'TOTP code was already used; wait for the next code'),
  actionNotApproved: entry(
    'action_not_approved',
    403,
    (status: string) => `Action request is '${status}', not approved`,
  ),
  hostNotAllowed: entry(
    'host_not_allowed',
    403,
    (host: string, service: string) => `Host '${host}' is not in the allowed_hosts of service '${service}'`,
  ),
  outboundRefused: entry('outbound_refused', 403, (reason: string) => reason),
  roleForbidden: entry(
    'role_forbidden',
    403,
    (role: string, what: string, needs: string) => `A member with the ${role} role may not ${what}: it takes ${needs}`,
  ),

  notRequestApprover: entry(
    'not_request_approver',
    403,
    (id: string) =>
      `Action request '${id}' is routed to other members: only its approvers (and, once it escalated, the people it escalated to) may answer it`,
  ),

  // 404: nothing of that id is visible to the caller (another account's ids look the same).
  actionNotFound: entry('action_not_found', 404, (id: string) => `Action request '${id}' not found`),
  hookClientNotFound: entry(
    'hook_client_not_found',
    404,
    (client: string) => `No hooks for '${client}': the clients are claude-code and codex`,
  ),
  accountNotFound: entry('account_not_found', 404, () => 'Account not found'),
  deviceNotFound: entry('device_not_found', 404, () => 'Device not found'),
  agentNotFound: entry('agent_not_found', 404, (id: string) => `Agent '${id}' not found`),
  ruleNotFound: entry('rule_not_found', 404, (id: string) => `Rule '${id}' not found`),
  spendingLimitNotFound: entry('spending_limit_not_found', 404, (id: string) => `Spending limit '${id}' not found`),
  grantNotFound: entry('grant_not_found', 404, (id: string) => `Grant '${id}' not found`),
  policyNotFound: entry('policy_not_found', 404, (id: string) => `Policy '${id}' not found`),
  credentialNotFound: entry('credential_not_found', 404, (id: string) => `Credential '${id}' not found`),
  memberNotFound: entry('member_not_found', 404, (id: string) => `Member '${id}' not found`),
  inviteNotFound: entry('invite_not_found', 404, () => 'No invite with that code: check it, or ask for a new invite'),
  signInNotConfigured: entry(
    'sign_in_not_configured',
    404,
    () => 'Sign-in with an identity provider is not set up on this service (OIDC_ISSUER)',
  ),
  serviceCredentialNotFound: entry(
    'service_credential_not_found',
    404,
    (service: string) => `Credential for service '${service}' not found`,
  ),
  passkeyNotFound: entry('passkey_not_found', 404, (id: string) => `Passkey '${id}' not found`),
  fileNotFound: entry('file_not_found', 404, (name: string) => `No file '${name}' in the device app`),
  // An id with a control character is no id of ours: simply not found, whatever the route.
  idNotFound: entry('id_not_found', 404, (what: string) => `No ${what} with that id`),
  routeNotFound: entry('route_not_found', 404, (method: string, path: string) => `No route ${method} ${path}`),
  authorizationRequestNotFound: entry(
    'authorization_request_not_found',
    404,
    () => 'No authorization request with that id: it expired (10 minutes) or never existed; connect the app again',
  ),
  connectionNotFound: entry('connection_not_found', 404, (id: string) => `Connected app '${id}' not found`),

  // 405
  methodNotAllowed: entry(
    'method_not_allowed',
    405,
    (method: string, path: string, allowed: string[]) =>
      `Method ${method} is not allowed on ${path}; use ${allowed.join(' or ')}`,
  ),

  // 409: the state does not allow it (any more).
  actionNotPending: entry('action_not_pending', 409, (status: string) => `Action request is '${status}', not pending`),
  quorumAlreadyApproved: entry(
    'quorum_already_approved',
    409,
    () => 'This device has already approved this request; the quorum needs approvals from other devices',
  ),
  quorumSameMember: entry(
    'quorum_same_member',
    409,
    () =>
      'Another device of the same member has already approved this request; the quorum counts people, and needs ' +
      'approvals from other members',
  ),
  lastOwner: entry(
    'last_owner',
    409,
    (what: string) => `Cannot ${what}: an account always has at least one owner; make another member owner first`,
  ),
  inviteUsed: entry('invite_used', 409, () => 'This invite was used already: each code lets one device join'),
  inviteExpired: entry('invite_expired', 409, () => 'This invite has expired: ask for a new invite'),
  memberEmailTaken: entry('member_email_taken', 409, () => 'Another member of the account has this email'),
  signInNoMember: entry(
    'sign_in_no_member',
    409,
    (email: string) => `No member has the email ${email}: ask an owner or admin to invite you with it`,
  ),
  signInEmailAmbiguous: entry(
    'sign_in_email_ambiguous',
    409,
    (email: string) => `Members of several accounts have the email ${email}: join with an invite instead`,
  ),
  alreadyExecuted: entry(
    'already_executed',
    409,
    (id: string, outcome?: string) =>
      `Action request '${id}' has already been executed${outcome ? ` (${outcome})` : ''}`,
  ),
  idempotencyKeyInProgress: entry(
    'idempotency_key_in_progress',
    409,
    () => 'A request with this Idempotency-Key is still being processed; retry it shortly',
  ),
  totpAlreadyConfigured: entry('totp_already_configured', 409, () => 'TOTP already configured'),
  tooManyCredentials: entry(
    'too_many_credentials',
    409,
    (max: number) => `The vault holds at most ${max} credentials per account`,
  ),
  credentialExists: entry(
    'credential_exists',
    409,
    (service: string) => `A credential for service '${service}' already exists`,
  ),
  tooManyRules: entry('too_many_rules', 409, (max: number) => `Too many rules: an account can have at most ${max}`),
  tooManySpendingLimits: entry(
    'too_many_spending_limits',
    409,
    (max: number) => `Too many spending limits: an account can have at most ${max}`,
  ),
  tooManyPolicies: entry(
    'too_many_policies',
    409,
    (max: number) => `Too many Cedar policies: an account can have at most ${max}`,
  ),
  passkeyExists: entry('passkey_exists', 409, () => 'This passkey is already registered'),
  pushNotConfigured: entry(
    'push_not_configured',
    409,
    () => 'No push provider is configured; use the live stream GET /device/events',
  ),
  authorizationRequestDecided: entry(
    'authorization_request_decided',
    409,
    () => 'This authorization request was answered already; connect the app again',
  ),

  // 422
  idempotencyKeyReused: entry(
    'idempotency_key_reused',
    422,
    () => 'Idempotency-Key was already used with a different request body; use a new key for a new request',
  ),

  // 413-431: the request is too big or of the wrong kind.
  bodyTooLarge: entry('body_too_large', 413, (limit: number) => `Request body is larger than the ${limit}-byte limit`),
  toolInputTooLarge: entry(
    'tool_input_too_large',
    413,
    (limit: number) => `tool_input: is larger than the ${limit}-byte limit; the client asks its user instead`,
  ),
  pathSegmentTooLong: entry('path_segment_too_long', 414, () => 'A path segment is longer than 200 characters'),
  unsupportedMediaType: entry('unsupported_media_type', 415, () => 'Unsupported Content-Type; send application/json'),
  rateLimited: entry(
    'rate_limited',
    429,
    (limit: number, windowSeconds: number, who: string, retryIn: string) =>
      `Rate limit of ${limit} requests per ${windowSeconds} s exceeded for ${who}; retry in ${retryIn} s`,
  ),
  headersTooLarge: entry('headers_too_large', 431, () => 'Request headers are too large'),

  // 500: a bug or broken data; the detail never carries internals to the caller.
  internal: entry('internal', 500, () => 'Internal error'),
  storedMetadataInvalid: entry('stored_metadata_invalid', 500, () => 'Stored vault metadata is not valid'),
  malformedReply: entry('malformed_reply', 500, (endpoint: string) => `Malformed reply from ${endpoint}`),
  replyBrokeContract: entry(
    'reply_broke_contract',
    500,
    (endpoint: string, reason: string) => `Reply of ${endpoint} broke its contract: ${reason}`,
  ),

  // 502-504: a part of the service or the upstream API did not answer as it should.
  upstreamTimeout: entry('upstream_timeout', 502, (reason: string) => `Upstream time-out: ${reason}`),
  upstreamTooLarge: entry('upstream_too_large', 502, (reason: string) => `Upstream response too large: ${reason}`),
  upstreamFailed: entry('upstream_failed', 502, (reason: string) => `Upstream error: ${reason}`),
  identityProviderFailed: entry(
    'identity_provider_failed',
    502,
    (reason: string) => `The identity provider did not answer as it should: ${reason}`,
  ),
  serviceUnavailable: entry('service_unavailable', 503, (service: string) => `The ${service} service is not available`),
  databaseUnavailable: entry(
    'database_unavailable',
    503,
    () => 'The database is not reachable at the moment (restarting or failing over); retry shortly',
  ),
  noEventConsumer: entry('no_event_consumer', 503, () => 'No consumer of action events is running'),
  notReady: entry('not_ready', 503, (missing: string[]) => `Not ready: ${missing.join(' and ')} not answering`),
  serviceTimeout: entry('service_timeout', 504, (service: string) => `The ${service} service did not answer in time`),
} as const;

/** Every entry of the catalogue, for documentation and its test. */
export const catalogue: ReadonlyArray<{ code: string; status: number }> = Object.values(errors);
