import { createHmac } from 'node:crypto';

/**
 * The Standard Webhooks signature of one delivery attempt: `v1,` + base64 HMAC-SHA256 of
 * `${webhook_id}.${timestamp}.${body}`, keyed by the base64-decoded part of the `whsec_` secret.
 */
export function webhookSignature(secret: string, webhookId: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${webhookId}.${timestamp}.${body}`).digest('base64')}`;
}
