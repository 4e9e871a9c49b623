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

/** How long an outbound call may take and how much of its answer is read; the caller's own, bounded here. */
export const RelayLimits = z.object({
  connect_timeout_ms: z.number().int().min(100).max(30_000),
  response_timeout_ms: z.number().int().min(100).max(120_000),
  max_response_bytes: z
    .number()
    .int()
    .min(1)
    .max(16 * 1024 * 1024),
});
export type RelayLimits = z.infer<typeof RelayLimits>;

/**
 * vault.relay: one outbound HTTP call made for another service of the system (webhooks and Web Push for the
 * notifier, OAuth client ID metadata documents for identity), so that the vault executor is the only process that
 * reaches the internet. The same SSRF rules apply as to a vault execution; no credential is involved.
 */
export const RelayRequest = z.object({
  url: z.string().max(4096),
  method: z.string().max(16),
  headers: z.record(z.string(), z.string()),
  body_base64: z.string().nullable(),
  limits: RelayLimits,
});
export type RelayRequest = z.infer<typeof RelayRequest>;

/** The upstream's answer, or why there was none (the outbound client's failure kinds; `detail` safe to store). */
export const RelayResult = z.discriminatedUnion('answered', [
  z.object({
    answered: z.literal(true),
    status_code: z.number().int(),
    headers: z.record(z.string(), z.string()),
    body_base64: z.string(),
  }),
  z.object({
    answered: z.literal(false),
    kind: z.enum(['refused', 'timeout', 'too_large', 'upstream']),
    detail: z.string(),
  }),
]);
export type RelayResult = z.infer<typeof RelayResult>;

/**
 * vault.relay_mail: one email sent over SMTP for the notifier (invites, escalations), by the vault executor, the
 * system's one door out; the SMTP server and its credentials (SMTP_URL) are the executor's, never on the bus.
 */
export const MailRequest = z.object({
  to: z.string().max(254),
  subject: z.string().max(998),
  text: z.string().max(100_000),
  html: z.string().max(200_000),
});
export type MailRequest = z.infer<typeof MailRequest>;

/** Whether the SMTP server took the message; `detail` (no secret in it) says why not. */
export const MailResult = z.discriminatedUnion('sent', [
  z.object({ sent: z.literal(true), message_id: z.string() }),
  z.object({ sent: z.literal(false), detail: z.string() }),
]);
export type MailResult = z.infer<typeof MailResult>;

/** The vault executor's message catalog: credentials (device), services and execution (agent), and the relay. */
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
  relay: defineEndpoint('vault', 'relay', RelayRequest, RelayResult),
  relayMail: defineEndpoint('vault', 'relay_mail', MailRequest, MailResult),
} as const;
