import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';

// A software passkey for tests: what a platform authenticator does (WebAuthn level 2, "none" attestation, ES256),
// so the server's verification can be exercised from Node, including what a real authenticator would never send.

type Cbor = number | string | Uint8Array | Map<Cbor, Cbor> | Record<string, Cbor>;

function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
  if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}

/** The few CBOR shapes attestation needs: integers, text, bytes and maps. */
export function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') return Buffer.concat([head(3, Buffer.byteLength(value)), Buffer.from(value)]);
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

const b64u = (b: Uint8Array | string) => Buffer.from(b).toString('base64url');
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest();

const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

/** One passkey held in memory, bound to an rp id and used at an origin. */
export function softwarePasskey(input: { rpId: string; origin: string }) {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const jwk = publicKey.export({ format: 'jwk' });
  const credentialId = randomBytes(16);
  let counter = 0;

  function authData(flags: number, count: number, attested?: Buffer): Buffer {
    const c = Buffer.alloc(4);
    c.writeUInt32BE(count);
    return Buffer.concat([sha256(input.rpId), Buffer.from([flags]), c, ...(attested ? [attested] : [])]);
  }

  return {
    id: b64u(credentialId),
    /** A RegistrationResponseJSON answering creation options; `userVerified: false` leaves the UV flag off. */
    register(options: { challenge: string }, opts: { userVerified?: boolean; origin?: string } = {}) {
      const clientDataJSON = JSON.stringify({
        type: 'webauthn.create',
        challenge: options.challenge,
        origin: opts.origin ?? input.origin,
        crossOrigin: false,
      });
      const coseKey = cbor(
        new Map<Cbor, Cbor>([
          [1, 2],
          [3, -7],
          [-1, 1],
          [-2, Buffer.from(jwk.x!, 'base64url')],
          [-3, Buffer.from(jwk.y!, 'base64url')],
        ]),
      );
      const idLength = Buffer.from([credentialId.length >> 8, credentialId.length & 0xff]);
      const attested = Buffer.concat([Buffer.alloc(16), idLength, credentialId, coseKey]);
      const data = authData(UP | (opts.userVerified === false ? 0 : UV) | AT, counter, attested);
      return {
        id: b64u(credentialId),
        rawId: b64u(credentialId),
        type: 'public-key' as const,
        response: {
          clientDataJSON: b64u(clientDataJSON),
          attestationObject: b64u(cbor({ fmt: 'none', attStmt: {}, authData: data })),
          transports: ['internal'],
        },
        authenticatorAttachment: 'platform' as const,
        clientExtensionResults: {},
      };
    },
    /** An AuthenticationResponseJSON over a challenge; the counter grows by one unless `counter` is given. */
    assert(challenge: string, opts: { userVerified?: boolean; counter?: number; origin?: string } = {}) {
      counter = opts.counter ?? counter + 1;
      const clientDataJSON = JSON.stringify({
        type: 'webauthn.get',
        challenge,
        origin: opts.origin ?? input.origin,
        crossOrigin: false,
      });
      const data = authData(UP | (opts.userVerified === false ? 0 : UV), counter);
      const signature = sign('sha256', Buffer.concat([data, sha256(clientDataJSON)]), privateKey);
      return {
        id: b64u(credentialId),
        rawId: b64u(credentialId),
        type: 'public-key' as const,
        response: { clientDataJSON: b64u(clientDataJSON), authenticatorData: b64u(data), signature: b64u(signature) },
        authenticatorAttachment: 'platform' as const,
        clientExtensionResults: {},
      };
    },
  };
}

/** The challenge of a decision: base64url SHA-256 of the approval message. */
export function decisionChallenge(
  requestId: string,
  decision: 'approve' | 'deny',
  contentHash: string | null,
  timestamp: string,
): string {
  return b64u(sha256(['aa-approval-v1', requestId, decision, contentHash ?? '', timestamp].join('\n')));
}
