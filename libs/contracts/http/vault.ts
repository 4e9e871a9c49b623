import { isIP } from 'node:net';
import { z } from 'zod';
import { StoredText } from '../validation.js';

export const authTypes = ['bearer', 'api_key', 'basic', 'custom'] as const;
export const AuthType = z.enum(authTypes);
export type AuthType = z.infer<typeof AuthType>;

export const vaultLimits = {
  serviceName: 200,
  credentialValue: 8192,
  description: 2000,
  allowedHosts: 50,
  credentialsPerAccount: 200,
} as const;

// A header name is an RFC 9110 token. Headers that frame or route the message can never carry a credential.
const HEADER_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
const reservedHeaders = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'proxy-authorization',
  'proxy-authenticate',
  'proxy-connection',
  'expect',
  'cookie',
]);

export const HeaderName = StoredText()
  .regex(HEADER_TOKEN, 'must be an HTTP header name')
  .refine((h) => !reservedHeaders.has(h.toLowerCase()), 'cannot be a header that frames or routes the request');

// Exact host names (as in a URL, without scheme, port or path) or IP literals; compared case-insensitively.
const HOSTNAME = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,62}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,62}[a-z0-9_])?)*\.?$/;
export const AllowedHost = StoredText()
  .trim()
  .transform((h) => h.toLowerCase().replace(/^\[|\]$/g, ''))
  .refine((h) => HOSTNAME.test(h) || isIP(h) !== 0, 'must be a host name or IP address, without scheme, port or path');

/** Body of POST /vault/credentials. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point of this check
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

export const CreateCredentialBody = z.object({
  service_name: StoredText().trim().min(1, 'must not be empty').max(vaultLimits.serviceName),
  credential_value: StoredText()
    .min(1, 'must not be empty')
    .max(vaultLimits.credentialValue)
    // It travels in an HTTP header: control characters could never be sent (or would split the header).
    .refine((v) => !CONTROL_CHARACTER.test(v), 'must not contain control characters or line breaks'),
  auth_type: AuthType.nullish().transform((t) => t ?? 'bearer'),
  auth_header: HeaderName.nullish().transform((h) => h ?? 'Authorization'),
  allowed_hosts: z.array(AllowedHost).min(1, 'must name at least one host').max(vaultLimits.allowedHosts),
  description: StoredText()
    .max(vaultLimits.description)
    .nullish()
    .transform((d) => d ?? null),
});
export type CreateCredentialBody = z.infer<typeof CreateCredentialBody>;

/** A stored credential as the device sees it: everything but the value. */
export const CredentialView = z.object({
  credential_id: z.string(),
  service_name: z.string(),
  auth_type: AuthType,
  auth_header: z.string(),
  allowed_hosts: z.array(z.string()),
  description: z.string().nullable(),
  created_at: z.string(),
});
export type CredentialView = z.infer<typeof CredentialView>;

export const CredentialList = z.object({ credentials: z.array(CredentialView) });
export type CredentialList = z.infer<typeof CredentialList>;

/** What an agent may know of a credential. */
export const VaultService = z.object({
  service_name: z.string(),
  auth_type: AuthType,
  allowed_hosts: z.array(z.string()),
  description: z.string().nullable(),
});
export const VaultServiceList = z.object({ services: z.array(VaultService) });
export type VaultServiceList = z.infer<typeof VaultServiceList>;

/** The upstream's answer to an executed call, credential value redacted. */
export const VaultExecutionResult = z.object({
  status_code: z.number().int(),
  headers: z.record(z.string(), z.string()),
  body: z.string(),
});
export type VaultExecutionResult = z.infer<typeof VaultExecutionResult>;
