import { hash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import type { VaultExecutionMetadata } from './http/actions.js';

// canonicalize ships CommonJS; under NodeNext its default export arrives as the module object.
const canonicalize = ((canonicalizeModule as { default?: unknown }).default ?? canonicalizeModule) as (
  input: unknown,
) => string | undefined;

/**
 * The hash a device approves (one implementation, used by the actions service at creation and by the vault
 * executor before it calls) for a vault execution request: lowercase hex SHA-256
 * of the RFC 8785 canonical JSON of exactly the call the service will make.
 */
export function vaultContentHash(
  call: Pick<VaultExecutionMetadata, 'service_name' | 'method' | 'url' | 'headers' | 'body'>,
): string {
  const canonical = canonicalize({
    service_name: call.service_name,
    method: call.method.toUpperCase(),
    url: call.url,
    headers: call.headers ?? {},
    body: call.body ?? null,
  });
  return hash('sha256', canonical!, 'hex');
}

/**
 * The hash a device approves for a coding agent's or an MCP server's tool call: lowercase hex SHA-256 of the RFC 8785
 * canonical JSON of the client, the tool and exactly the input it will run with.
 */
export function toolCallContentHash(call: { source: string; tool_name: string; tool_input: unknown }): string {
  const canonical = canonicalize({ source: call.source, tool_name: call.tool_name, tool_input: call.tool_input });
  return hash('sha256', canonical!, 'hex');
}

/** The digest of an edited tool input (approve with changes), as the receipt and the audit entry state it. */
export function toolInputHash(input: unknown): string {
  return hash('sha256', canonicalize(input)!, 'hex');
}
