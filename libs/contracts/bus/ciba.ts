import { z } from 'zod';
import { ById, confidential, defineEndpoint } from './envelope.js';
import { AgentPrincipal, DevicePrincipal, NewAction } from './actions.js';
import {
  type AgentActionDetail,
  BackchannelAuthenticationAnswer,
  CibaClientView,
  CibaTokenAnswer,
  type UpdateAgentBody,
} from '../http/ciba.js';

/**
 * actions.v1.ciba_authorize: a CIBA request, its detail already made an action request (NewAction, with the
 * binding message among its metadata). `client_notification_token` present means ping mode.
 */
export const NewCibaRequest = z.object({
  agent: AgentPrincipal,
  action: NewAction,
  binding_message: z.string().nullable(),
  client_notification_token: z.string().nullable(),
});
export type NewCibaRequest = z.infer<typeof NewCibaRequest>;

/** The metadata key the binding message travels under, which the device app shows beside the title. */
export const BINDING_MESSAGE_KEY = 'binding_message';

/** The action request of a validated `agent_action` entry, its binding message and requested expiry. */
export function cibaActionOf(detail: AgentActionDetail, bindingMessage: string | null, expiry: number): NewAction {
  const metadata = { ...(detail.metadata ?? {}) };
  if (bindingMessage !== null) metadata[BINDING_MESSAGE_KEY] = bindingMessage;
  return {
    action_type: detail.action_type,
    title: detail.title,
    description: detail.description ?? null,
    risk_level: detail.risk_level,
    reversible: true,
    amount: detail.amount ?? null,
    currency: detail.currency,
    recipient: detail.recipient ?? null,
    metadata: Object.keys(metadata).length > 0 ? metadata : null,
    expires_in_seconds: expiry,
    callback_url: null,
  };
}

/** actions.v1.ciba_token: the CIBA grant of an authenticated client; `issuer` is the tokens' `iss`. */
export const CibaTokenRequest = z.object({
  agent: AgentPrincipal,
  auth_req_id: z.string().max(200),
  issuer: z.string(),
});
export type CibaTokenRequest = z.infer<typeof CibaTokenRequest>;

/** actions.v1.set_ciba_client: a device sets (or clears) an agent's ping endpoint. */
export const SetCibaClientRequest = z.object({
  device: DevicePrincipal,
  agent_id: ById,
  backchannel_client_notification_endpoint: z.string().nullable(),
});
export type SetCibaClientRequest = z.infer<typeof SetCibaClientRequest>;

/** The bus message of a validated PATCH /agents/{agent_id} body. */
export function setCibaClientRequestOf(
  device: DevicePrincipal,
  agentId: string,
  body: UpdateAgentBody,
): SetCibaClientRequest {
  return {
    device,
    agent_id: agentId,
    backchannel_client_notification_endpoint: body.backchannel_client_notification_endpoint,
  };
}

/** actions.v1.ciba_ping: what the notifier needs to ping a client about one of its requests. */
export const CibaPingRequest = z.object({ agent_id: ById, request_id: ById });
export const CibaPing = z.object({ auth_req_id: z.string(), client_notification_token: z.string() });
export type CibaPing = z.infer<typeof CibaPing>;

/** The actions service's CIBA messages. */
export const cibaEndpoints = {
  authorize: confidential(defineEndpoint('actions', 'ciba_authorize', NewCibaRequest, BackchannelAuthenticationAnswer)),
  token: confidential(defineEndpoint('actions', 'ciba_token', CibaTokenRequest, CibaTokenAnswer)),
  getClient: defineEndpoint(
    'actions',
    'get_ciba_client',
    z.object({ device: DevicePrincipal, agent_id: ById }),
    CibaClientView,
  ),
  setClient: defineEndpoint('actions', 'set_ciba_client', SetCibaClientRequest, CibaClientView),
  ping: defineEndpoint('actions', 'ciba_ping', CibaPingRequest, CibaPing),
} as const;

/**
 * A ping-mode request's callback_url: the client's notification endpoint marked with this fragment, so the notifier
 * tells a ping from a webhook by the event alone (a fragment is never sent; the endpoint may have none of its own).
 */
const PING_FRAGMENT = '#ciba-ping';

/** The callback_url of a ping-mode request to this endpoint. */
export const cibaPingTargetOf = (endpoint: string): string => `${endpoint}${PING_FRAGMENT}`;

/** The endpoint to ping when a callback_url is a ping-mode request's, else undefined (an ordinary webhook). */
export function cibaPingEndpointOf(callbackUrl: string): string | undefined {
  return callbackUrl.endsWith(PING_FRAGMENT) ? callbackUrl.slice(0, -PING_FRAGMENT.length) : undefined;
}
