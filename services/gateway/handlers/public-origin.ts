import type { FastifyRequest } from 'fastify';

/**
 * The origin clients reach the service at: PUBLIC_BASE_URL's when it is set (behind a proxy or load balancer, and
 * the same on every replica), else the scheme and host the request came in on. The MCP resource (`<origin>/mcp`)
 * and the OAuth issuer are named by it.
 */
export function publicOriginOf(request: FastifyRequest, publicBaseUrl: string | undefined): string {
  if (publicBaseUrl) return new URL(publicBaseUrl).origin;
  return `${request.protocol}://${request.host}`.toLowerCase();
}

/** The URL of the MCP endpoint, which is the resource its access tokens are bound to. */
export const mcpResourceOf = (origin: string) => `${origin}/mcp`;

/** Where a client finds the resource's metadata (RFC 9728), named in every 401 of `/mcp`. */
export const resourceMetadataUrlOf = (origin: string) => `${origin}/.well-known/oauth-protected-resource/mcp`;
