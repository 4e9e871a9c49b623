/** A row of vault.credentials as postgres.js returns it; value_enc is ciphertext only. */
export interface CredentialRow {
  id: string;
  account_id: string;
  service_name: string;
  auth_type: 'bearer' | 'api_key' | 'basic' | 'custom';
  auth_header: string;
  allowed_hosts: string[];
  description: string | null;
  value_enc: string;
  created_at: Date;
}
