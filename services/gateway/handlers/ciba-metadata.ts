import { AGENT_ACTION_TYPE, CIBA_GRANT_TYPE } from '@agent-auth/contracts';

/**
 * The OpenID Provider configuration (OpenID Connect Discovery 1.0 with CIBA 4 and RFC 9396 10): a CIBA provider
 * whose clients are agents. Signed authentication requests are not supported, so
 * backchannel_authentication_request_signing_alg_values_supported is absent; the holder is the agent's account, so
 * no user code. The code flow of /mcp is described by /.well-known/oauth-authorization-server.
 */
export function openIdConfiguration(origin: string) {
  return {
    issuer: origin,
    backchannel_authentication_endpoint: `${origin}/oauth/bc-authorize`,
    token_endpoint: `${origin}/oauth/token`,
    jwks_uri: `${origin}/.well-known/jwks.json`,
    scopes_supported: ['openid'],
    subject_types_supported: ['public'],
    grant_types_supported: [CIBA_GRANT_TYPE],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    id_token_signing_alg_values_supported: ['ES256'],
    backchannel_token_delivery_modes_supported: ['poll', 'ping'],
    backchannel_user_code_parameter_supported: false,
    authorization_details_types_supported: [AGENT_ACTION_TYPE],
    claims_supported: [
      'iss',
      'aud',
      'sub',
      'iat',
      'exp',
      'auth_time',
      'at_hash',
      'urn:openid:params:jwt:claim:auth_req_id',
    ],
    service_documentation: `${origin}/docs`,
  };
}
