import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Random base62 text of the given length, drawn without modulo bias. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
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
} as const;

export type IdKind = keyof typeof idPrefixes;

/** A new public identifier of the given kind, e.g. act_3kTq... (20 random base62 chars). */
export function newId(kind: IdKind, length = 20): string {
  return idPrefixes[kind] + randomBase62(length);
}
