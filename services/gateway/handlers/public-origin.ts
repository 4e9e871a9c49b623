import type { FastifyRequest } from 'fastify';

const parsed = new Map<string, URL>();
/** PUBLIC_BASE_URL parsed, once rather than on every request. */
function publicUrlOf(publicBaseUrl: string): URL {
  let url = parsed.get(publicBaseUrl);
  if (url === undefined) {
    url = new URL(publicBaseUrl);
    parsed.set(publicBaseUrl, url);
  }
  return url;
}

/** The host (and port) of PUBLIC_BASE_URL: the Host the service answers to behind its proxy. */
export const publicHostOf = (publicBaseUrl: string) => publicUrlOf(publicBaseUrl).host;

/**
 * The origin clients reach the service at: PUBLIC_BASE_URL's when it is set (behind a proxy or load balancer, and
 * the same on every replica), else the scheme and host the request came in on. The MCP resource (`<origin>/mcp`)
 * and the OAuth issuer are named by it.
 */
export function publicOriginOf(request: FastifyRequest, publicBaseUrl: string | undefined): string {
  if (publicBaseUrl) return publicUrlOf(publicBaseUrl).origin;
  return `${request.protocol}://${request.host}`.toLowerCase();
}

/** The URL of the MCP endpoint, which is the resource its access tokens are bound to. */
export const mcpResourceOf = (origin: string) => `${origin}/mcp`;

/** Where a client finds the resource's metadata (RFC 9728), named in every 401 of `/mcp`. */
export const resourceMetadataUrlOf = (origin: string) => `${origin}/.well-known/oauth-protected-resource/mcp`;
