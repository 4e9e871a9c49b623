// Signing approvals on this device (docs/api-guide.md, Signed approvals): an ECDSA P-256 key made by WebCrypto whose private
// half is non-extractable, kept in IndexedDB (a CryptoKey is stored as an object, never as bytes a script can read).

/** The exact message a device signs: five lines joined by \n, no trailing newline. */
export function approvalMessage({ requestId, decision, contentHash, timestamp }) {
  return ['aa-approval-v1', requestId, decision, contentHash ?? '', timestamp].join('\n');
}

/**
 * The message a device signs to decide several requests at once: `aa-approval-batch-v1`, the decision,
 * one line `id content_hash` per request in the order sent (ending in the space when there is no hash), the timestamp.
 */
export function batchApprovalMessage({ decision, requests, timestamp }) {
  return ['aa-approval-batch-v1', decision, ...requests.map((r) => `${r.id} ${r.content_hash ?? ''}`), timestamp].join(
    '\n',
  );
}

/** Base64url without padding, as the API accepts. */
export function base64url(bytes) {
  let binary = '';
  for (const b of new Uint8Array(bytes)) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** A new P-256 key pair; the private key can sign but can never be exported. */
export function generateDeviceKey(subtle = globalThis.crypto.subtle) {
  return subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']);
}

/** The public half as the JWK that PUT /device/public-key takes. */
export async function publicJwk(publicKey, subtle = globalThis.crypto.subtle) {
  const { kty, crv, x, y } = await subtle.exportKey('jwk', publicKey);
  return { kty, crv, x, y };
}

/** The signature (raw r‖s, base64url) and timestamp to send with an approve or deny. */
export async function signDecision(
  privateKey,
  { requestId, decision, contentHash, now = new Date() },
  subtle = globalThis.crypto.subtle,
) {
  const timestamp = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const message = new TextEncoder().encode(approvalMessage({ requestId, decision, contentHash, timestamp }));
  const signature = await subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, privateKey, message);
  return { signature: base64url(signature), timestamp };
}

/** The signature and timestamp to send with a batch approve or deny (requests as sent: [{id, content_hash}]). */
export async function signBatch(
  privateKey,
  { decision, requests, now = new Date() },
  subtle = globalThis.crypto.subtle,
) {
  const timestamp = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const message = new TextEncoder().encode(batchApprovalMessage({ decision, requests, timestamp }));
  const signature = await subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, privateKey, message);
  return { signature: base64url(signature), timestamp };
}

const DB = 'agent-auth-device';
const STORE = 'keys';

function openKeyStore() {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(DB, 1);
    open.onupgradeneeded = () => open.result.createObjectStore(STORE);
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
}

async function keyStoreOp(mode, work) {
  const db = await openKeyStore();
  return new Promise((resolve, reject) => {
    const tx = db.transaction(STORE, mode);
    const request = work(tx.objectStore(STORE));
    tx.oncomplete = () => resolve(request.result);
    tx.onerror = () => reject(tx.error);
  });
}

/** The key pair this browser holds for a device (named by a hash of its id), or undefined. */
export function loadDeviceKey(deviceTag) {
  return keyStoreOp('readonly', (store) => store.get(deviceTag));
}

/** Keeps a key pair for a device in this browser. */
export function saveDeviceKey(deviceTag, keyPair) {
  return keyStoreOp('readwrite', (store) => store.put(keyPair, deviceTag));
}

/** A stable, non-secret name for a device id: the first 16 hex digits of its SHA-256. */
export async function deviceTag(deviceId, subtle = globalThis.crypto.subtle) {
  const digest = new Uint8Array(await subtle.digest('SHA-256', new TextEncoder().encode(deviceId)));
  return Array.from(digest.slice(0, 8), (b) => b.toString(16).padStart(2, '0')).join('');
}
