// Checking in the browser, with WebCrypto, what the service signed (docs/security.md): receipts and the audit chain,
// against the receipt keys published at /.well-known/jwks.json. Nothing here trusts what the API says about itself.

const ZERO_HASH = '0'.repeat(64);

/** RFC 8785 canonical JSON: keys sorted by UTF-16 code units, no whitespace, ECMAScript number form. */
export function canonicalJson(value) {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value)
    .filter((k) => value[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
}

/** Lowercase hex SHA-256 of text. */
export async function sha256Hex(text, subtle = globalThis.crypto.subtle) {
  const digest = await subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

function fromBase64url(text) {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/**
 * Verifies a compact JWS (ES256) against a JWK set and the expected `typ`; returns {header, payload} or throws
 * naming what is wrong. The signature is raw r‖s, which is what WebCrypto's ECDSA verify takes.
 */
export async function verifyJws(token, jwks, typ, subtle = globalThis.crypto.subtle) {
  const parts = String(token).split('.');
  if (parts.length !== 3) throw new Error('not a compact JWS');
  const header = JSON.parse(new TextDecoder().decode(fromBase64url(parts[0])));
  if (header.alg !== 'ES256') throw new Error(`alg is ${header.alg}, not ES256`);
  if (header.typ !== typ) throw new Error(`typ is ${header.typ}, not ${typ}`);
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  if (!jwk) throw new Error(`no published key '${header.kid}'`);
  const key = await subtle.importKey(
    'jwk',
    { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y },
    { name: 'ECDSA', namedCurve: 'P-256' },
    false,
    ['verify'],
  );
  const signed = new TextEncoder().encode(`${parts[0]}.${parts[1]}`);
  const ok = await subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, fromBase64url(parts[2]), signed);
  if (!ok) throw new Error('signature does not verify');
  return { header, payload: JSON.parse(new TextDecoder().decode(fromBase64url(parts[1]))) };
}

/** A receipt's claims once its signature verifies (typ aa-receipt+jwt). */
export async function verifyReceipt(receipt, jwks, subtle) {
  return (await verifyJws(receipt, jwks, 'aa-receipt+jwt', subtle)).payload;
}

/** The hash an audit event must carry: SHA-256 of the canonical JSON of the event without its hash. */
export function auditEventHash(event, subtle) {
  const { seq, at, request_id, type, actor, data, prev_hash } = event;
  return sha256Hex(canonicalJson({ seq, at, request_id, type, actor, data, prev_hash }), subtle);
}

/**
 * Verifies a run of consecutive events and the signed head: each hash, each link, and the head's signature and
 * place. Where retention cut the chain, `checkpoint` (GET /audit's first page carries it) is where it starts: signed
 * for the head's account (typ aa-audit-checkpoint+jws), the first event right after it and linked to its hash.
 * Returns {ok: true, seq} or {ok: false, seq, reason} naming the first broken event.
 */
export async function verifyChain(events, head, jwks, { subtle, checkpoint } = {}) {
  let signed;
  let cut;
  try {
    signed = (await verifyJws(head.signature, jwks, 'aa-audit-head+jws', subtle)).payload;
  } catch (err) {
    return { ok: false, seq: null, reason: `head: ${err.message}` };
  }
  try {
    if (checkpoint) cut = (await verifyJws(checkpoint.signature, jwks, 'aa-audit-checkpoint+jws', subtle)).payload;
  } catch (err) {
    return { ok: false, seq: null, reason: `checkpoint: ${err.message}` };
  }
  if (signed.seq !== head.seq || signed.hash !== head.hash || signed.at !== head.at)
    return { ok: false, seq: null, reason: 'head differs from what its signature covers' };
  if (cut && (cut.account_id !== signed.account_id || cut.seq !== checkpoint.seq || cut.hash !== checkpoint.hash))
    return { ok: false, seq: null, reason: 'checkpoint differs from what its signature covers' };
  let previous = cut && { seq: cut.seq, hash: cut.hash };
  for (const event of events) {
    if (previous && event.seq !== previous.seq + 1) return { ok: false, seq: previous.seq + 1, reason: 'missing' };
    const expectedPrev = previous ? previous.hash : event.seq === 1 ? ZERO_HASH : event.prev_hash;
    if (event.prev_hash !== expectedPrev)
      return { ok: false, seq: event.seq, reason: 'prev_hash does not link to the event before' };
    if ((await auditEventHash(event, subtle)) !== event.hash)
      return { ok: false, seq: event.seq, reason: 'content does not match its hash' };
    if (event.seq === signed.seq && event.hash !== signed.hash)
      return { ok: false, seq: event.seq, reason: 'differs from the signed head' };
    previous = event;
  }
  if (cut && (signed.seq < cut.seq || (signed.seq === cut.seq && signed.hash !== cut.hash)))
    return { ok: false, seq: null, reason: 'the signed head does not lie on the chain after the checkpoint' };
  if ((previous?.seq ?? 0) < signed.seq)
    return { ok: false, seq: (previous?.seq ?? 0) + 1, reason: 'events before the signed head are missing' };
  return { ok: true, seq: signed.seq };
}
