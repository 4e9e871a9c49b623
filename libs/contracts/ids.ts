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
  policy: 'pol_',
  executionClaim: 'clm_',
  member: 'mem_',
  invite: 'inv_',
} as const;

export type IdKind = keyof typeof idPrefixes;

// The kinds every create stores as index keys (the request, its events and outbox row). A random key lands on a
// random page of its index: each insert descends the tree and dirties another page, and after a checkpoint writes a
// full image of it into the WAL. Under load with 300,000 requests stored, creates wrote 3.5 kB of WAL each after a
// checkpoint and 3.0 kB later, against 2.9 and 2.8 kB for keys that begin with their creation time, which go to the
// few pages at the index's end (docs/capacity.md "Indexes on the request path").
const TIME_ORDERED: ReadonlySet<IdKind> = new Set<IdKind>(['action', 'webhookMessage']);

const TIME_DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';
/** Digits of the time prefix: 36^9 ms reach the year 5138. */
const TIME_LENGTH = 9;

/**
 * A time in milliseconds as nine lowercase base-36 digits, so that ids sort as their times do under any collation
 * (digits before lowercase letters in every one).
 */
export function timePrefix(ms: number): string {
  let out = '';
  for (let rest = Math.max(0, Math.floor(ms)), i = 0; i < TIME_LENGTH; i++, rest = Math.floor(rest / 36)) {
    out = TIME_DIGITS[rest % 36] + out;
  }
  return out;
}

/**
 * A new public identifier of the given kind, e.g. act_3kTq... (20 base62 chars). Requests and their events' ids
 * begin with the time they were made (9 chars) and end with 11 random ones (65 bits); the others are all random.
 */
export function newId(kind: IdKind, length = 20): string {
  if (!TIME_ORDERED.has(kind)) return idPrefixes[kind] + randomBase62(length);
  return idPrefixes[kind] + timePrefix(Date.now()) + randomBase62(length - TIME_LENGTH);
}
