import { z } from 'zod';
import { ById, defineEndpoint, Empty } from './envelope.js';
import { AgentPrincipal, DevicePrincipal } from './actions.js';
import { Deleted } from '../http/actions.js';
import {
  CreateCredentialBody,
  CredentialList,
  CredentialView,
  VaultExecutionResult,
  VaultServiceList,
} from '../http/vault.js';

/** The vault executor's message catalog: credentials (device), services and execution (agent). */
export const vaultEndpoints = {
  health: defineEndpoint('vault', 'health', Empty, z.object({ ok: z.literal(true) })),
  createCredential: defineEndpoint(
    'vault',
    'create_credential',
    z.object({ device: DevicePrincipal, body: CreateCredentialBody }),
    CredentialView,
  ),
  listCredentials: defineEndpoint('vault', 'list_credentials', z.object({ device: DevicePrincipal }), CredentialList),
  deleteCredential: defineEndpoint(
    'vault',
    'delete_credential',
    z.object({ device: DevicePrincipal, credential_id: ById }),
    Deleted,
  ),
  listServices: defineEndpoint('vault', 'list_services', z.object({ agent: AgentPrincipal }), VaultServiceList),
  execute: defineEndpoint(
    'vault',
    'execute',
    z.object({ agent: AgentPrincipal, request_id: ById }),
    VaultExecutionResult,
  ),
} as const;
