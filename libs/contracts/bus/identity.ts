import { z } from 'zod';
import type { ConsentBody, RegistrationBody } from '../http/oauth.js';
import { Deleted } from '../http/actions.js';
import { DevicePrincipal } from './actions.js';
import { ById, confidential, defineEndpoint, Empty } from './envelope.js';

// The identity service's messages: OAuth clients, the holder's consent, codes and tokens (docs/architecture.md).

/** How a client authenticates at the token endpoint. */
export const TokenEndpointAuthMethod = z.enum(['none', 'client_secret_post', 'client_secret_basic']);
export type TokenEndpointAuthMethod = z.infer<typeof TokenEndpointAuthMethod>;

/** The client metadata this server keeps, from a registration (RFC 7591) or a client ID metadata document. */
export const ClientMetadata = z.object({
  redirect_uris: z.array(z.string()),
  client_name: z.string().nullable(),
  client_uri: z.string().nullable(),
  logo_uri: z.string().nullable(),
  token_endpoint_auth_method: TokenEndpointAuthMethod,
  grant_types: z.array(z.string()),
  response_types: z.array(z.string()),
  scope: z.string().nullable(),
});
export type ClientMetadata = z.infer<typeof ClientMetadata>;

/** A registration as the identity service takes it: the client's fields, null for "not given". */
export const ClientRegistration = z.object({
  redirect_uris: z.array(z.string()),
  client_name: z.string().nullable(),
  client_uri: z.string().nullable(),
  logo_uri: z.string().nullable(),
  token_endpoint_auth_method: z.string().nullable(),
  grant_types: z.array(z.string()).nullable(),
  response_types: z.array(z.string()).nullable(),
  scope: z.string().nullable(),
});
export type ClientRegistration = z.infer<typeof ClientRegistration>;

export function clientRegistrationOf(body: RegistrationBody): ClientRegistration {
  return {
    redirect_uris: body.redirect_uris,
    client_name: body.client_name || null,
    client_uri: body.client_uri ?? null,
    logo_uri: body.logo_uri ?? null,
    token_endpoint_auth_method: body.token_endpoint_auth_method ?? null,
    grant_types: body.grant_types ?? null,
    response_types: body.response_types ?? null,
    scope: body.scope ?? null,
  };
}

/** The answer of a registration (RFC 7591 3.2.1): the secret, for a confidential client, shown this once. */
export const RegisteredClient = ClientMetadata.extend({
  client_id: z.string(),
  client_id_issued_at: z.number().int(),
  client_secret: z.string().optional(),
  /** 0: the secret does not expire. */
  client_secret_expires_at: z.number().int().optional(),
});
export type RegisteredClient = z.infer<typeof RegisteredClient>;

/** GET /oauth/authorize as the identity service takes it; `issuer` and `resource_served` are the gateway's own. */
export const AuthorizationAsked = z.object({
  client_id: z.string().nullable(),
  redirect_uri: z.string().nullable(),
  response_type: z.string().nullable(),
  code_challenge: z.string().nullable(),
  code_challenge_method: z.string().nullable(),
  state: z.string().nullable(),
  scope: z.string().nullable(),
  resource: z.string().nullable(),
  /** The authorization server's issuer identifier (the service's public origin). */
  issuer: z.string(),
  /** The protected resource this server issues tokens for: `<origin>/mcp`. */
  resource_served: z.string(),
});
export type AuthorizationAsked = z.infer<typeof AuthorizationAsked>;

/**
 * A valid request waits for the holder's consent (`consent`); one whose client and redirect URI are known but whose
 * other parameters are wrong goes back to the client with the error (`redirect`). Requests whose client or redirect
 * URI cannot be trusted are refused outright (an error reply), never redirected.
 */
export const AuthorizationStarted = z.discriminatedUnion('outcome', [
  z.object({ outcome: z.literal('consent'), request_id: z.string() }),
  z.object({ outcome: z.literal('redirect'), redirect_to: z.string() }),
]);
export type AuthorizationStarted = z.infer<typeof AuthorizationStarted>;

/** What the device app shows of a request awaiting consent (GET /api/v1/oauth/requests/{id}). */
export const AuthorizationView = z.object({
  request_id: z.string(),
  client_id: z.string(),
  /** The client's own name; its redirect host when it gave none. */
  client_name: z.string(),
  client_uri: z.string().nullable(),
  /** Whether the client registered here or is known by its client ID metadata document (an https client_id). */
  client_kind: z.enum(['registered', 'metadata_document']),
  /** Where the holder's answer is sent: the host is what the holder should recognise. */
  redirect_uri: z.string(),
  redirect_host: z.string(),
  resource: z.string(),
  scope: z.string().nullable(),
  expires_at: z.string(),
});
export type AuthorizationView = z.infer<typeof AuthorizationView>;

/** POST /api/v1/oauth/consent as the identity service takes it. */
export const ConsentDecision = z.object({
  device: DevicePrincipal,
  request_id: z.string(),
  allow: z.boolean(),
  agent_id: z.string().nullable(),
  agent_name: z.string().nullable(),
});
export type ConsentDecision = z.infer<typeof ConsentDecision>;

export function consentDecisionOf(device: DevicePrincipal, body: ConsentBody): ConsentDecision {
  return {
    device,
    request_id: body.request,
    allow: body.allow,
    agent_id: body.agent_id ?? null,
    agent_name: body.agent_name ?? null,
  };
}

export const ConsentGiven = z.object({ redirect_to: z.string() });

/** A client's credentials at the token or revocation endpoint (client_secret_basic, client_secret_post or none). */
export const ClientCredentials = z.object({ client_id: z.string(), client_secret: z.string().nullable() });
export type ClientCredentials = z.infer<typeof ClientCredentials>;

export const CodeExchange = z.object({
  client: ClientCredentials,
  code: z.string(),
  code_verifier: z.string(),
  redirect_uri: z.string().nullable(),
  resource: z.string().nullable(),
});
export type CodeExchange = z.infer<typeof CodeExchange>;

export const TokenRefresh = z.object({
  client: ClientCredentials,
  refresh_token: z.string(),
  resource: z.string().nullable(),
});
export type TokenRefresh = z.infer<typeof TokenRefresh>;

/** The token response (RFC 6749 5.1). */
export const TokenSet = z.object({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  refresh_token: z.string(),
  scope: z.string(),
});
export type TokenSet = z.infer<typeof TokenSet>;

export const TokenRevocation = z.object({
  client: ClientCredentials,
  token: z.string(),
  token_type_hint: z.string().nullable(),
});
export type TokenRevocation = z.infer<typeof TokenRevocation>;

/** Who an access token acts as, the connection it belongs to, the resource it is bound to and until when. */
export const TokenPrincipal = z.object({
  account_id: z.string(),
  agent_id: z.string(),
  connection_id: z.string(),
  resource: z.string(),
  expires_at: z.string(),
});
export type TokenPrincipal = z.infer<typeof TokenPrincipal>;

/** A client connected to the account (Agents → connected apps): one consent, its tokens, until revoked. */
export const ConnectionView = z.object({
  connection_id: z.string(),
  client_id: z.string(),
  client_name: z.string(),
  agent_id: z.string(),
  resource: z.string(),
  scope: z.string().nullable(),
  created_at: z.string(),
  /** When its tokens were last refreshed; null until the first refresh. */
  refreshed_at: z.string().nullable(),
});
export type ConnectionView = z.infer<typeof ConnectionView>;

export const ConnectionList = z.object({ connections: z.array(ConnectionView) });

export const identityEndpoints = {
  health: defineEndpoint('identity', 'health', Empty, z.object({ ok: z.literal(true) })),
  registerClient: confidential(defineEndpoint('identity', 'register_client', ClientRegistration, RegisteredClient)),
  startAuthorization: defineEndpoint('identity', 'start_authorization', AuthorizationAsked, AuthorizationStarted),
  viewAuthorization: defineEndpoint(
    'identity',
    'view_authorization',
    z.object({ device: DevicePrincipal, request_id: ById }),
    AuthorizationView,
  ),
  decideAuthorization: confidential(defineEndpoint('identity', 'decide_authorization', ConsentDecision, ConsentGiven)),
  exchangeCode: confidential(defineEndpoint('identity', 'exchange_code', CodeExchange, TokenSet)),
  refreshTokens: confidential(defineEndpoint('identity', 'refresh_tokens', TokenRefresh, TokenSet)),
  revokeToken: defineEndpoint('identity', 'revoke_token', TokenRevocation, z.object({ revoked: z.boolean() })),
  authenticateToken: defineEndpoint(
    'identity',
    'authenticate_token',
    z.object({ access_token: z.string() }),
    TokenPrincipal,
  ),
  listConnections: defineEndpoint(
    'identity',
    'list_connections',
    z.object({ device: DevicePrincipal }),
    ConnectionList,
  ),
  revokeConnection: defineEndpoint(
    'identity',
    'revoke_connection',
    z.object({ device: DevicePrincipal, connection_id: ById }),
    Deleted,
  ),
} as const;
