import { mcpResourceOf } from './public-origin.js';

/** The one scope: the tools of /mcp. */
export const MCP_SCOPES = ['mcp'];

/** The protected resource metadata of /mcp (RFC 9728): where its tokens come from. */
export function protectedResourceMetadata(origin: string) {
  return {
    resource: mcpResourceOf(origin),
    authorization_servers: [origin],
    bearer_methods_supported: ['header'],
    scopes_supported: MCP_SCOPES,
    resource_name: 'Agent action authorization (MCP)',
    resource_documentation: `${origin}/docs`,
  };
}

/**
 * The authorization server metadata (RFC 8414): the code flow with PKCE S256 only, dynamic registration (RFC 7591)
 * and client ID metadata documents, rotating refresh tokens, revocation (RFC 7009), `iss` in the response (RFC 9207).
 */
export function authorizationServerMetadata(origin: string) {
  const authMethods = ['none', 'client_secret_post', 'client_secret_basic'];
  return {
    issuer: origin,
    authorization_endpoint: `${origin}/oauth/authorize`,
    token_endpoint: `${origin}/oauth/token`,
    registration_endpoint: `${origin}/oauth/register`,
    revocation_endpoint: `${origin}/oauth/revoke`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: authMethods,
    revocation_endpoint_auth_methods_supported: authMethods,
    scopes_supported: MCP_SCOPES,
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${origin}/docs`,
  };
}
