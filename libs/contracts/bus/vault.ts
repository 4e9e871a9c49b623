import { z } from 'zod';
import { ById, confidential, defineEndpoint, Empty } from './envelope.js';
import { AgentPrincipal, DevicePrincipal } from './actions.js';
import { Deleted } from '../http/actions.js';
import {
  AuthType,
  type CreateCredentialBody,
  CredentialList,
  CredentialView,
  VaultExecutionResult,
  VaultServiceList,
} from '../http/vault.js';

/**
 * vault.v2.create_credential: a credential for the device's account, its defaults applied (auth_type bearer,
 * header Authorization) and null for no description. The value travels once, to be stored encrypted.
 */
export const NewCredential = z.object({
  device: DevicePrincipal,
  service_name: z.string(),
  credential_value: z.string(),
  auth_type: AuthType,
  auth_header: z.string(),
  allowed_hosts: z.array(z.string()).min(1),
  description: z.string().nullable(),
});
export type NewCredential = z.infer<typeof NewCredential>;

/** The bus message of a validated POST /vault/credentials body. */
export function newCredentialOf(device: DevicePrincipal, body: CreateCredentialBody): NewCredential {
  const { service_name, credential_value, auth_type, auth_header, allowed_hosts } = body;
  return {
    device,
    service_name,
    credential_value,
    auth_type,
    auth_header,
    allowed_hosts,
    description: body.description ?? null,
  };
}

/** The vault executor's message catalog: credentials (device), services and execution (agent). */
export const vaultEndpoints = {
  health: defineEndpoint('vault', 'health', Empty, z.object({ ok: z.literal(true) })),
  // v2: a NewCredential of its own (v1 carried the HTTP body).
  createCredential: defineEndpoint('vault', 'create_credential', NewCredential, CredentialView, 2),
  listCredentials: defineEndpoint('vault', 'list_credentials', z.object({ device: DevicePrincipal }), CredentialList),
  deleteCredential: defineEndpoint(
    'vault',
    'delete_credential',
    z.object({ device: DevicePrincipal, credential_id: ById }),
    Deleted,
  ),
  listServices: defineEndpoint('vault', 'list_services', z.object({ agent: AgentPrincipal }), VaultServiceList),
  execute: confidential(
    defineEndpoint('vault', 'execute', z.object({ agent: AgentPrincipal, request_id: ById }), VaultExecutionResult),
  ),
} as const;
