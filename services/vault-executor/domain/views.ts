import type { CredentialView } from '@agent-auth/contracts';
import type { CredentialRow } from './rows.js';

/** A credential as the device sees it: never its value. */
export function toCredentialView(row: CredentialRow): CredentialView {
  return {
    credential_id: row.id,
    service_name: row.service_name,
    auth_type: row.auth_type,
    auth_header: row.auth_header,
    allowed_hosts: row.allowed_hosts,
    description: row.description,
    created_at: row.created_at.toISOString(),
  };
}

/** A credential as an agent sees it. */
export function toVaultService(row: CredentialRow) {
  return {
    service_name: row.service_name,
    auth_type: row.auth_type,
    allowed_hosts: row.allowed_hosts,
    description: row.description,
  };
}
