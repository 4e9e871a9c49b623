import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Random bytes are drawn from the system's CSPRNG 8 KiB at a time, not one call per id (as Node does for randomUUID).
const pool = Buffer.alloc(8192);
let used = pool.length;

function randomByte(): number {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  return pool[used++]!;
}

/** Random base62 text of the given length, drawn without modulo bias. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out;
}

export const idPrefixes = {
  account: 'acc_',
  agent: 'agt_',
  apiKey: 'aa_',
  device: 'dev_',
  action: 'act_',
  credential: 'cred_',
  rule: 'rul_',
  limit: 'lim_',
  webhookMessage: 'msg_',
  webhookSecret: 'whsec_',
  passkey: 'pk_',
  grant: 'grt_',
  executionClaim: 'clm_',
} as const;

export type IdKind = keyof typeof idPrefixes;

/** A new public identifier of the given kind, e.g. act_3kTq... (20 random base62 chars). */
export function newId(kind: IdKind, length = 20): string {
  return idPrefixes[kind] + randomBase62(length);
}
