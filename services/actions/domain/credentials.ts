import { hash } from 'node:crypto';
import { idPrefixes, randomBase62 } from '@agent-auth/contracts';

const API_KEY = /^aa_([A-Za-z0-9]{12})_([A-Za-z0-9]{32})$/;
const DEVICE_ID = /^dev_[A-Za-z0-9]{32}$/;

/** A new agent API key: aa_<key id>_<secret>. The key id is not secret; it finds the stored hash. */
export function newApiKey(): { apiKey: string; keyId: string } {
  const keyId = randomBase62(12);
  return { apiKey: `${idPrefixes.apiKey}${keyId}_${randomBase62(32)}`, keyId };
}

/** The key id of a well-formed API key, or undefined for anything else. */
export function apiKeyId(apiKey: string): string | undefined {
  return API_KEY.exec(apiKey)?.[1];
}

/** A new device id: a 190-bit bearer credential. */
export function newDeviceId(): string {
  return idPrefixes.device + randomBase62(32);
}

/** True for a text shaped like a device id (checked before any database look-up). */
export function isWellFormedDeviceId(deviceId: string): boolean {
  return DEVICE_ID.test(deviceId);
}

/** What is stored in place of a device id: its SHA-256 (the id is random enough that a slow hash adds nothing). */
export function deviceIdHash(deviceId: string): string {
  return hash('sha256', deviceId, 'hex');
}

/** A Standard Webhooks signing secret: whsec_ + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return idPrefixes.webhookSecret + Buffer.from(randomBase62(43)).toString('base64').slice(0, 43);
}
