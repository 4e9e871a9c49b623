import { z } from 'zod';
import { StoredText } from '../validation.js';

// The OAuth 2.1 surface (docs/api-guide.md, "OAuth"): what the device app sends, and the parameters the OAuth
// endpoints read. The RFCs' parameters are strings; what they mean is checked by the identity service.

/** Body of POST /api/v1/oauth/consent: the holder's answer to an authorization request, and the agent it acts as. */
export const ConsentBody = z
  .object({
    request: StoredText().min(1).max(100),
    allow: z.boolean(),
    agent_id: StoredText().min(1).max(100).optional(),
    agent_name: StoredText().trim().min(1, 'must not be empty').max(100).optional(),
  })
  .refine((b) => !b.allow || (b.agent_id === undefined) !== (b.agent_name === undefined), {
    message: 'give exactly one of agent_id (an agent of the account) and agent_name (a new agent) to allow',
    path: ['agent_id'],
  });
export type ConsentBody = z.infer<typeof ConsentBody>;

/** Path of GET /api/v1/oauth/requests/{request_id}. */
export const AuthorizationRequestParams = z.object({ request_id: StoredText().min(1).max(100) });

/** Path of DELETE /api/v1/oauth/connections/{connection_id}. */
export const ConnectionParams = z.object({ connection_id: StoredText().min(1).max(100) });

const OptionalParam = z.string().max(4096).optional();

/** Query of GET /oauth/authorize (RFC 6749 4.1.1 with PKCE and RFC 8707's resource); other parameters are ignored. */
export const AuthorizeQuery = z.looseObject({
  client_id: OptionalParam,
  redirect_uri: OptionalParam,
  response_type: OptionalParam,
  code_challenge: OptionalParam,
  code_challenge_method: OptionalParam,
  state: OptionalParam,
  scope: OptionalParam,
  resource: OptionalParam,
});
export type AuthorizeQuery = z.infer<typeof AuthorizeQuery>;

/** Form of POST /oauth/token (RFC 6749 4.1.3 and 6, client_secret_post credentials included). */
export const TokenForm = z.looseObject({
  grant_type: OptionalParam,
  code: OptionalParam,
  code_verifier: OptionalParam,
  redirect_uri: OptionalParam,
  refresh_token: OptionalParam,
  scope: OptionalParam,
  resource: OptionalParam,
  /** The CIBA grant's request (urn:openid:params:grant-type:ciba). */
  auth_req_id: OptionalParam,
  client_id: OptionalParam,
  client_secret: OptionalParam,
});
export type TokenForm = z.infer<typeof TokenForm>;

/** Form of POST /oauth/revoke (RFC 7009). */
export const RevocationForm = z.looseObject({
  token: OptionalParam,
  token_type_hint: OptionalParam,
  client_id: OptionalParam,
  client_secret: OptionalParam,
});
export type RevocationForm = z.infer<typeof RevocationForm>;

const ShortText = StoredText().max(2000);

/**
 * Body of POST /oauth/register (RFC 7591 2): the client metadata this server keeps; other fields are ignored. Types
 * are checked here (invalid_client_metadata), the redirect URIs' rules by the identity service (invalid_redirect_uri).
 */
export const RegistrationBody = z.looseObject({
  redirect_uris: z.array(ShortText).min(1).max(10),
  client_name: StoredText().trim().max(200).optional(),
  client_uri: ShortText.optional(),
  logo_uri: ShortText.optional(),
  token_endpoint_auth_method: ShortText.optional(),
  grant_types: z.array(ShortText).max(10).optional(),
  response_types: z.array(ShortText).max(10).optional(),
  scope: ShortText.optional(),
});
export type RegistrationBody = z.infer<typeof RegistrationBody>;
