import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { exportJWK } from 'jose';
import { AUDIT_CHECKPOINT_TYP, AUDIT_HEAD_TYP, RECEIPT_TYP, type Jwks } from '@agent-auth/contracts';

const KID = /^[A-Za-z0-9_.-]{1,64}$/;

/** The receipt keys: the current one signs; every one, current and retired, is published. */
export interface ReceiptKeys {
  readonly currentKid: string;
  /** The public keys as a JSON Web Key Set (GET /.well-known/jwks.json). */
  jwks(): Jwks;
  /** Signs receipt claims as a compact JWS (ES256, typ aa-receipt+jwt, kid). */
  signReceipt(claims: Record<string, unknown>): Promise<string>;
  /** Signs the head of an account's audit chain as a compact JWS over its JSON. */
  signHead(head: { account_id: string; seq: number; hash: string; at: string | null }): Promise<string>;
  /** Signs the checkpoint where retention cut an account's chain (its last dropped event), as a head but its typ. */
  signCheckpoint(last: { account_id: string; seq: number; hash: string; at: string }): Promise<string>;
  /** Signs other claims as a compact JWT (ES256, the given typ, kid): the CIBA grant's ID and access tokens. */
  signJwt(typ: string, claims: Record<string, unknown>): string;
}

/**
 * Parses RECEIPT_KEYS: "kid:base64,kid:base64,…", each the DER of an EC P-256 key, PKCS#8 or SEC1 (private) or SPKI
 * (public: a retired key whose private half is gone). The first entry signs and must be private.
 */
export async function parseReceiptKeys(spec: string): Promise<ReceiptKeys> {
  const publics = new Map<string, KeyObject>();
  let current: { kid: string; key: KeyObject } | undefined;
  for (const part of spec
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [kid, encoded] = part.split(':');
    if (!kid || !encoded || !KID.test(kid)) throw new Error('RECEIPT_KEYS: each entry must be "kid:base64 DER key"');
    if (publics.has(kid)) throw new Error(`RECEIPT_KEYS: key id '${kid}' appears twice`);
    const der = Buffer.from(encoded, 'base64');
    const key = keyFrom(kid, der);
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
      throw new Error(`RECEIPT_KEYS: key '${kid}' must be an EC P-256 key`);
    }
    if (!current && key.type !== 'private')
      throw new Error(`RECEIPT_KEYS: the first key ('${kid}') signs, so it must be a private key`);
    current ??= { kid, key };
    publics.set(kid, key.type === 'private' ? createPublicKey(key) : key);
  }
  if (!current) throw new Error('RECEIPT_KEYS: no keys given');
  const jwks: Jwks = { keys: [] };
  for (const [kid, key] of publics) {
    const jwk = await exportJWK(key);
    jwks.keys.push({ kty: 'EC', crv: 'P-256', x: jwk.x!, y: jwk.y!, kid, alg: 'ES256', use: 'sig' });
  }
  const kid = current.kid;
  const signing = current.key;
  // Every receipt has the same header: encoded once.
  const receiptHeader = base64url(JSON.stringify({ alg: 'ES256', typ: RECEIPT_TYP, kid }));
  const headHeader = base64url(JSON.stringify({ alg: 'ES256', typ: AUDIT_HEAD_TYP, kid }));
  const checkpointHeader = base64url(JSON.stringify({ alg: 'ES256', typ: AUDIT_CHECKPOINT_TYP, kid }));
  return {
    currentKid: kid,
    jwks: () => jwks,
    signReceipt: async (claims) => compactJws(receiptHeader, JSON.stringify(claims), signing),
    signHead: async (head) => compactJws(headHeader, JSON.stringify(head), signing),
    signCheckpoint: async (last) => compactJws(checkpointHeader, JSON.stringify(last), signing),
    signJwt: (typ, claims) =>
      compactJws(base64url(JSON.stringify({ alg: 'ES256', typ, kid })), JSON.stringify(claims), signing),
  };
}

const base64url = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');

/**
 * A compact JWS (RFC 7515) with ES256 (RFC 7518 3.4: the signature is r||s, 64 bytes), signed with node:crypto on
 * the key object parsed once. jose's own signing goes through WebCrypto, an asynchronous job per signature that
 * cost several times the signature itself on the create path; any JOSE library verifies what this writes.
 */
function compactJws(encodedHeader: string, payload: string, key: KeyObject): string {
  const input = `${encodedHeader}.${base64url(payload)}`;
  const signature = sign('sha256', Buffer.from(input, 'ascii'), { key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

function keyFrom(kid: string, der: Buffer): KeyObject {
  const attempts = [
    () => createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }),
    () => createPrivateKey({ key: der, format: 'der', type: 'sec1' }), // what `openssl genpkey -outform DER` writes
    () => createPublicKey({ key: der, format: 'der', type: 'spki' }),
  ];
  for (const attempt of attempts) {
    try {
      return attempt();
    } catch {
      /* try the next form */
    }
  }
  throw new Error(`RECEIPT_KEYS: key '${kid}' is not a base64 DER EC key (PKCS#8, SEC1 or SPKI)`);
}

/** A fresh RECEIPT_KEYS entry (a new P-256 key), for all-in-one mode's generated keys file and for rotation. */
export function generateReceiptKeySpec(kid = 'r1'): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return `${kid}:${privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64')}`;
}

/** The retired form of a RECEIPT_KEYS entry: its public half only (SPKI), enough to keep old receipts verifiable. */
export function retiredReceiptKeySpec(entry: string): string {
  const [kid, encoded] = entry.split(':');
  const key = keyFrom(kid!, Buffer.from(encoded ?? '', 'base64'));
  return `${kid}:${createPublicKey(key).export({ format: 'der', type: 'spki' }).toString('base64')}`;
}
