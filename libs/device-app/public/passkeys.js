// Passkeys in the browser: register one with the platform authenticator, and assert over the digest of
// an approval message. The JSON forms are those of the WebAuthn spec, which the server's library verifies.
import { approvalMessage, base64url, batchApprovalMessage } from './signing.js';

/** Bytes of base64url text. */
export function fromBase64url(text) {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** Whether this browser can make and use passkeys at all. */
export function passkeysSupported() {
  return typeof window !== 'undefined' && 'PublicKeyCredential' in window && !!navigator.credentials;
}

/** The challenge of a message: base64url SHA-256 of its UTF-8 bytes. */
async function messageChallenge(message, subtle = globalThis.crypto.subtle) {
  return base64url(await subtle.digest('SHA-256', new TextEncoder().encode(message)));
}

/** The challenge of a decision: base64url SHA-256 of the UTF-8 approval message. */
export function decisionChallenge(input, subtle = globalThis.crypto.subtle) {
  return messageChallenge(approvalMessage(input), subtle);
}

/** The challenge of a batch decision: base64url SHA-256 of the batch message. */
export function batchChallenge(input, subtle = globalThis.crypto.subtle) {
  return messageChallenge(batchApprovalMessage(input), subtle);
}

/** A timestamp as the approval message carries it: ISO 8601, seconds, UTC. */
export function decisionTimestamp(now = new Date()) {
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function credentialJson(credential) {
  if (typeof credential.toJSON === 'function') return credential.toJSON();
  const r = credential.response;
  const response = { clientDataJSON: base64url(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = base64url(r.attestationObject);
    if (r.getTransports) response.transports = r.getTransports();
  } else {
    response.authenticatorData = base64url(r.authenticatorData);
    response.signature = base64url(r.signature);
    if (r.userHandle) response.userHandle = base64url(r.userHandle);
  }
  return {
    id: credential.id,
    rawId: base64url(credential.rawId),
    type: credential.type,
    response,
    authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
    clientExtensionResults: credential.getClientExtensionResults(),
  };
}

/** Creates a passkey from the server's creation options; the RegistrationResponseJSON to send back. */
export async function createPasskey(options) {
  const publicKey = {
    ...options,
    challenge: fromBase64url(options.challenge),
    user: { ...options.user, id: fromBase64url(options.user.id) },
    excludeCredentials: (options.excludeCredentials ?? []).map((c) => ({ ...c, id: fromBase64url(c.id) })),
  };
  return credentialJson(await navigator.credentials.create({ publicKey }));
}

/** Asks the platform authenticator to verify the holder over a challenge; the assertion as JSON. */
async function assertChallenge(challenge, passkeys) {
  const credential = await navigator.credentials.get({
    publicKey: {
      challenge: fromBase64url(challenge),
      rpId: location.hostname,
      allowCredentials: passkeys.map((p) => ({
        type: 'public-key',
        id: fromBase64url(p.credential_id),
        transports: p.transports,
      })),
      userVerification: 'required',
      timeout: 60_000,
    },
  });
  return credentialJson(credential);
}

/** Asks the platform authenticator to verify the holder and sign a decision; the body fields to send with it. */
export async function assertDecision({ requestId, decision, contentHash, passkeys, now = new Date() }) {
  const timestamp = decisionTimestamp(now);
  const challenge = await decisionChallenge({ requestId, decision, contentHash, timestamp });
  return { timestamp, webauthn: await assertChallenge(challenge, passkeys) };
}

/** The same for a batch (requests as sent: [{id, content_hash}]): one assertion covers all of them. */
export async function assertBatch({ decision, requests, passkeys, now = new Date() }) {
  const timestamp = decisionTimestamp(now);
  const challenge = await batchChallenge({ decision, requests, timestamp });
  return { timestamp, webauthn: await assertChallenge(challenge, passkeys) };
}
