import type { Bus } from '@agent-auth/bus';
import type { Keyring } from '@agent-auth/encryption';
import type { OutboundClient } from '@agent-auth/outbound';
import type { CredentialStore } from '../store/credentials.js';

/** Everything the vault executor's use cases need, passed in (no singletons). */
export interface VaultDeps {
  bus: Bus;
  /** The vault keyring (VAULT_KEYS): no other service holds it. */
  keyring: Keyring;
  credentials: CredentialStore;
  outbound: OutboundClient;
}

/** The encryption context of a credential value: bound to its row, so a ciphertext cannot be moved to another. */
export function credentialContext(row: { id: string; account_id: string }): string {
  return `credential:${row.id}:${row.account_id}`;
}
