import { z } from 'zod';
import { StoredText } from '../validation.js';
import { CreateActionBody, fieldLimits, Metadata } from './actions.js';

// OpenID Connect CIBA (Client-Initiated Backchannel Authentication) with rich authorization requests (RFC 9396):
// an agent, as a confidential client, asks its account holder for approval with any OpenID client library
// (docs/api-guide.md, "CIBA"). The parameters are strings, as forms carry them; what they mean is checked here.

/** The one grant type of a CIBA token request. */
export const CIBA_GRANT_TYPE = 'urn:openid:params:grant-type:ciba';
/** The one `authorization_details` type: an action the agent asks to take. */
export const AGENT_ACTION_TYPE = 'agent_action';

export const cibaLimits = {
  bindingMessage: 200,
  minExpiry: 30,
  maxExpiry: 3600,
  defaultExpiry: 300,
  /** Seconds between polls a client is told to keep at first; each slow_down adds 5. */
  interval: 5,
  slowDownStep: 5,
  /** The JSON text of authorization_details: one entry with up to 8 KiB of metadata fits. */
  authorizationDetailsChars: 12_000,
  notificationToken: 1024,
} as const;

const Param = z.string().max(4096).optional();

/** Form of POST /oauth/bc-authorize (CIBA 7.1); the hints and other parameters are read as strings and ignored. */
export const BackchannelAuthenticationForm = z.looseObject({
  scope: Param,
  binding_message: Param,
  requested_expiry: Param,
  client_notification_token: Param,
  authorization_details: z
    .string()
    .max(64 * 1024)
    .optional(),
  client_id: Param,
  client_secret: Param,
});
export type BackchannelAuthenticationForm = z.infer<typeof BackchannelAuthenticationForm>;

/** `binding_message`: shown to the holder beside the request, so it must be short plain text. */
export const BindingMessage = StoredText()
  .trim()
  .min(1, 'must not be empty')
  .max(cibaLimits.bindingMessage, `must be at most ${cibaLimits.bindingMessage} characters`);

/** `requested_expiry`: whole seconds, as a form gives them. */
export const RequestedExpiry = z
  .string()
  .regex(/^\d{1,6}$/, 'must be a whole number of seconds')
  .transform(Number)
  .pipe(
    z
      .number()
      .min(cibaLimits.minExpiry, `must be ${cibaLimits.minExpiry} to ${cibaLimits.maxExpiry} seconds`)
      .max(cibaLimits.maxExpiry, `must be ${cibaLimits.minExpiry} to ${cibaLimits.maxExpiry} seconds`),
  );

/** `client_notification_token`: a bearer token the ping carries back (RFC 6750's characters). */
export const ClientNotificationToken = z
  .string()
  .min(1)
  .max(cibaLimits.notificationToken)
  .regex(/^[A-Za-z0-9\-._~+/]+=*$/, 'must be a bearer token (RFC 6750 characters)');

/**
 * One `agent_action` entry of `authorization_details`: the action request's own fields, with the create's defaults
 * (risk medium, USD). Fields of other authorization detail types (locations, actions, …) are ignored.
 */
export const AgentActionDetail = z.object({
  type: z.literal(AGENT_ACTION_TYPE, { error: `must be '${AGENT_ACTION_TYPE}'` }),
  action_type: CreateActionBody.shape.action_type,
  title: CreateActionBody.shape.title,
  description: CreateActionBody.shape.description,
  amount: CreateActionBody.shape.amount,
  currency: CreateActionBody.shape.currency,
  recipient: CreateActionBody.shape.recipient,
  risk_level: CreateActionBody.shape.risk_level,
  metadata: Metadata.nullish(),
});
export type AgentActionDetail = z.infer<typeof AgentActionDetail>;

/** `authorization_details` as parsed JSON: exactly one `agent_action` entry (one request, one decision). */
export const AuthorizationDetails = z.array(AgentActionDetail).length(1, 'must hold exactly one agent_action entry');

/**
 * An approved entry of `authorization_details` as the tokens carry it: what the holder approved, with their edits
 * (an edited tool input) if any; absent fields are left out.
 */
export const ApprovedActionDetail = z.object({
  type: z.literal(AGENT_ACTION_TYPE),
  action_type: z.string(),
  title: z.string(),
  description: z.string().optional(),
  amount: z.number().optional(),
  currency: z.string().optional(),
  recipient: z.string().optional(),
  risk_level: z.string(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  action_id: z.string(),
});
export type ApprovedActionDetail = z.infer<typeof ApprovedActionDetail>;

/** Answer of POST /oauth/bc-authorize (CIBA 7.3). */
export const BackchannelAuthenticationAnswer = z.object({
  auth_req_id: z.string(),
  expires_in: z.number().int(),
  interval: z.number().int(),
});
export type BackchannelAuthenticationAnswer = z.infer<typeof BackchannelAuthenticationAnswer>;

/** Answer of POST /oauth/token with the CIBA grant once approved (CIBA 10.1.1, RFC 9396 7). */
export const CibaTokenAnswer = z.object({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  id_token: z.string(),
  scope: z.string(),
  authorization_details: z.array(ApprovedActionDetail),
});
export type CibaTokenAnswer = z.infer<typeof CibaTokenAnswer>;

/** Where a ping-mode client is told that its request has an answer: https, no fragment. */
export const NotificationEndpoint = StoredText().max(fieldLimits.callbackUrl);

/** Body of PATCH /agents/{agent_id}: the agent's CIBA ping endpoint, or null to poll only. */
export const UpdateAgentBody = z.object({
  backchannel_client_notification_endpoint: NotificationEndpoint.nullable(),
});
export type UpdateAgentBody = z.infer<typeof UpdateAgentBody>;

/** An agent as an OpenID client (PATCH /agents/{agent_id}, GET /agents/{agent_id}/ciba-client). */
export const CibaClientView = z.object({
  client_id: z.string(),
  name: z.string(),
  token_endpoint_auth_methods: z.array(z.string()),
  backchannel_token_delivery_modes: z.array(z.enum(['poll', 'ping'])),
  backchannel_client_notification_endpoint: z.string().nullable(),
});
export type CibaClientView = z.infer<typeof CibaClientView>;
