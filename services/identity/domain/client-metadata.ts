import { type ClientMetadata, type ClientRegistration, TokenEndpointAuthMethod } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { redirectUriProblem } from './redirect-uris.js';

const GRANT_TYPES = new Set(['authorization_code', 'refresh_token']);

/** A URL the holder may be shown (the client's home page or logo): https only, else it is dropped. */
function httpsOrNull(value: string | null): string | null {
  if (value === null || !URL.canParse(value)) return null;
  return new URL(value).protocol === 'https:' ? value : null;
}

function checkRedirectUris(uris: readonly string[]): void {
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw errors.oauthInvalidRedirectUri(problem);
  }
}

/**
 * The metadata kept of a registration (RFC 7591 2): the authorization code flow only (with refresh tokens), its
 * redirect URIs checked, and the token endpoint auth method the client asked for (RFC 7591's default is
 * client_secret_basic; MCP clients without a secret ask for none).
 */
export function registeredMetadataOf(registration: ClientRegistration): ClientMetadata {
  checkRedirectUris(registration.redirect_uris);
  const method = TokenEndpointAuthMethod.safeParse(registration.token_endpoint_auth_method ?? 'client_secret_basic');
  if (!method.success)
    throw errors.oauthInvalidClientMetadata(
      `token_endpoint_auth_method '${registration.token_endpoint_auth_method}' is not supported: use none, client_secret_post or client_secret_basic`,
    );
  const grantTypes = registration.grant_types ?? ['authorization_code', 'refresh_token'];
  const unsupported = grantTypes.find((g) => !GRANT_TYPES.has(g));
  if (unsupported !== undefined)
    throw errors.oauthInvalidClientMetadata(
      `grant_types: '${unsupported}' is not supported: use authorization_code and refresh_token`,
    );
  if (!grantTypes.includes('authorization_code'))
    throw errors.oauthInvalidClientMetadata('grant_types: must include authorization_code');
  const responseTypes = registration.response_types ?? ['code'];
  if (responseTypes.some((r) => r !== 'code'))
    throw errors.oauthInvalidClientMetadata("response_types: only 'code' is supported");
  return {
    redirect_uris: registration.redirect_uris,
    client_name: registration.client_name,
    client_uri: httpsOrNull(registration.client_uri),
    logo_uri: httpsOrNull(registration.logo_uri),
    token_endpoint_auth_method: method.data,
    grant_types: grantTypes,
    response_types: responseTypes,
    scope: registration.scope,
  };
}

/**
 * Whether a client_id is a client ID metadata document's URL: https with a path, no fragment, credentials or dot
 * segments (http only for the hosts of ALLOW_INSECURE_HOSTS, for local development).
 */
export function isMetadataDocumentUrl(clientId: string, insecureHosts: readonly string[]): boolean {
  if (!URL.canParse(clientId)) return false;
  const url = new URL(clientId);
  const secure = url.protocol === 'https:' || (url.protocol === 'http:' && insecureHosts.includes(url.hostname));
  const dotSegment = /(^|\/)\.\.?(\/|$)/.test(clientId.slice(url.origin.length));
  return secure && url.pathname !== '/' && !url.hash && !url.username && !url.password && !dotSegment;
}

const asStrings = (value: unknown): string[] | null =>
  Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : null;
const asString = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/**
 * The metadata of a client known by its client ID metadata document: the document must name its own URL as
 * client_id and list its redirect URIs; such a client has no secret here (token_endpoint_auth_method none).
 */
export function documentMetadataOf(clientId: string, document: unknown): ClientMetadata {
  const invalid = (why: string) => errors.oauthInvalidClient(`The client ID metadata document at ${clientId} ${why}`);
  if (typeof document !== 'object' || document === null || Array.isArray(document))
    throw invalid('is not a JSON object');
  const doc = document as Record<string, unknown>;
  if (doc.client_id !== clientId) throw invalid('does not name its own URL as client_id');
  const redirectUris = asStrings(doc.redirect_uris);
  if (!redirectUris?.length || redirectUris.length > 10) throw invalid('lists no redirect_uris (1 to 10)');
  for (const uri of redirectUris)
    if (redirectUriProblem(uri)) throw invalid(`has a redirect URI that cannot be used: ${uri.slice(0, 200)}`);
  const method = doc.token_endpoint_auth_method ?? 'none';
  if (method !== 'none')
    throw invalid(`asks for token_endpoint_auth_method '${String(method)}': only none is supported`);
  return {
    redirect_uris: redirectUris,
    client_name: asString(doc.client_name)?.slice(0, 200) || null,
    client_uri: httpsOrNull(asString(doc.client_uri)),
    logo_uri: httpsOrNull(asString(doc.logo_uri)),
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    scope: asString(doc.scope),
  };
}
