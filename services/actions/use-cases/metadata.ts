import type { Keyring } from '@agent-auth/encryption';
import type { RequestRow } from '../domain/rows.js';

const context = (id: string) => `request:${id}:metadata`;
/** Decrypted metadata kept in memory, by ciphertext: a pending list is read again and again while it waits. */
const OPENED_MAX = 5000;

/** Encrypts and decrypts a request's metadata, bound to its id so a ciphertext cannot be moved to another request. */
export function createMetadataSeal(keyring: Keyring) {
  // By request id, holding the ciphertext it opened: an entry is only used for exactly that stored value (a string
  // compare, rather than building and hashing a key of id and ciphertext on every read).
  const opened = new Map<string, { sealed: string; plain: string }>();
  const decrypt = (id: string, sealed: string): string => {
    const hit = opened.get(id);
    if (hit?.sealed === sealed) return hit.plain;
    const plain = keyring.decrypt(sealed, context(id));
    opened.set(id, { sealed, plain });
    // Maps keep insertion order: the first key is the one opened longest ago.
    if (opened.size > OPENED_MAX) opened.delete(opened.keys().next().value!);
    return plain;
  };
  return {
    /** The stored form of a new request's metadata, or null when it has none. */
    seal(id: string, metadata: Record<string, unknown> | null | undefined): string | null {
      return metadata ? keyring.encrypt(JSON.stringify(metadata), context(id)) : null;
    },
    /** The stored form of a tool input the holder edited (approve with changes). */
    sealUpdatedInput(id: string, input: Record<string, unknown>): string {
      return keyring.encrypt(JSON.stringify(input), `request:${id}:updated_input`);
    },
    /** The tool input the holder edited, or undefined when the request was not approved with changes. */
    openUpdatedInput(row: Pick<RequestRow, 'id' | 'updated_input_enc'>): Record<string, unknown> | undefined {
      if (!row.updated_input_enc) return undefined;
      return JSON.parse(keyring.decrypt(row.updated_input_enc, `request:${row.id}:updated_input`)) as Record<
        string,
        unknown
      >;
    },
    /**
     * The metadata of a stored request read once, among thousands (a replay of an account's history): opened
     * without being kept, so it pushes no pending request's metadata out of what is kept.
     */
    openOnce(row: Pick<RequestRow, 'id' | 'metadata_enc'>): Record<string, unknown> {
      if (!row.metadata_enc) return {};
      const hit = opened.get(row.id);
      const plain = hit?.sealed === row.metadata_enc ? hit.plain : keyring.decrypt(row.metadata_enc, context(row.id));
      return JSON.parse(plain) as Record<string, unknown>;
    },
    /** The metadata of a stored request ({} when it has none); a fresh object on every call. */
    open(row: Pick<RequestRow, 'id' | 'metadata_enc'>): Record<string, unknown> {
      if (!row.metadata_enc) return {};
      return JSON.parse(decrypt(row.id, row.metadata_enc)) as Record<string, unknown>;
    },
  };
}
export type MetadataSeal = ReturnType<typeof createMetadataSeal>;
