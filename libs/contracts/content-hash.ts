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
