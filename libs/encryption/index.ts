import { createCipheriv, createDecipheriv, randomBytes, randomFillSync, timingSafeEqual } from 'node:crypto';

const FORMAT = 'v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

// Nonces are drawn from the system's CSPRNG 12 KiB at a time, not one system call per encryption (a create seals its
// metadata on the hot path); each is still 96 fresh random bits, used once.
const noncePool = Buffer.alloc(NONCE_BYTES * 1024);
let nonceUsed = noncePool.length;

function freshNonce(): Buffer {
  if (nonceUsed === noncePool.length) {
    randomFillSync(noncePool);
    nonceUsed = 0;
  }
  nonceUsed += NONCE_BYTES;
  return Buffer.from(noncePool.subarray(nonceUsed - NONCE_BYTES, nonceUsed));
}

/** A set of AES-256-GCM keys: one active key encrypts, any key decrypts by the id stored in the ciphertext. */
export interface Keyring {
  readonly activeKeyId: string;
  /** Encrypts text bound to a context (e.g. the row id), so a ciphertext cannot be moved to another row. */
  encrypt(plaintext: string, context: string): string;
  /** Decrypts a value written by encrypt with the same context; throws if tampered with or the key is unknown. */
  decrypt(token: string, context: string): string;
}

/** Parses "id:base64key[,id:base64key…]"; the first key is the active one. */
export function parseKeyring(spec: string): Keyring {
  const keys = new Map<string, Buffer>();
  let activeKeyId = '';
  for (const part of spec
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [id, encoded] = part.split(':');
    if (!id || !encoded || !/^[A-Za-z0-9_-]{1,32}$/.test(id))
      throw new Error('keyring: each entry must be "id:base64key"');
    const key = Buffer.from(encoded, 'base64');
    if (key.length !== 32) throw new Error(`keyring: key '${id}' must be 32 bytes (base64 of 32 random bytes)`);
    keys.set(id, key);
    activeKeyId ||= id;
  }
  if (!activeKeyId) throw new Error('keyring: no keys given');
  return createKeyring(keys, activeKeyId);
}

/** A fresh keyring spec with one random key, for all-in-one mode's generated keys file. */
export function generateKeyringSpec(id = 'k1'): string {
  return `${id}:${randomBytes(32).toString('base64')}`;
}

function createKeyring(keys: Map<string, Buffer>, activeKeyId: string): Keyring {
  return {
    activeKeyId,
    encrypt(plaintext, context) {
      const nonce = freshNonce();
      const cipher = createCipheriv('aes-256-gcm', keys.get(activeKeyId)!, nonce);
      cipher.setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return [FORMAT, activeKeyId, nonce.toString('base64url'), body.toString('base64url')].join(':');
    },
    decrypt(token, context) {
      const [format, keyId, nonce, body] = token.split(':');
      if (format !== FORMAT || !keyId || !nonce || !body) throw new Error('keyring: not a ciphertext of this format');
      const key = keys.get(keyId);
      if (!key) throw new Error(`keyring: unknown key id '${keyId}'`);
      const raw = Buffer.from(body, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(0, raw.length - TAG_BYTES)), decipher.final()]).toString(
        'utf8',
      );
    },
  };
}

/** Constant-time equality of two strings (hashes, codes), so a comparison does not leak how much of a guess matched. */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
