import webpush from 'web-push';
import type { NotifierSettings } from '@agent-auth/config';
import type { PushSubscriptionRow } from '../store/push-subscriptions.js';
import type { WebhookPoster } from './webhook-poster.js';
import type { PushMessage } from '../domain/push-messages.js';

/** A way to wake a device that is not connected to the live stream. */
export interface PushProvider {
  readonly name: 'web_push';
  /** The key a browser subscribes with, if the provider has one. */
  readonly publicKey: string | null;
  /** 'gone' when the subscription no longer exists (it is then deleted). */
  send(subscription: PushSubscriptionRow, message: PushMessage): Promise<'sent' | 'gone'>;
}

/**
 * Web Push with VAPID (RFC 8291/8292), when VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY are set; null otherwise.
 * The web-push package encrypts and signs; the call itself goes through the outbound poster, so push endpoints
 * get the same address checks as webhooks.
 */
export function webPushProvider(
  config: Pick<NotifierSettings, 'VAPID_PUBLIC_KEY' | 'VAPID_PRIVATE_KEY' | 'VAPID_SUBJECT'>,
  poster: WebhookPoster,
): PushProvider | null {
  if (!config.VAPID_PUBLIC_KEY || !config.VAPID_PRIVATE_KEY) return null;
  const vapidDetails = {
    subject: config.VAPID_SUBJECT ?? 'mailto:admin@localhost',
    publicKey: config.VAPID_PUBLIC_KEY,
    privateKey: config.VAPID_PRIVATE_KEY,
  };
  return {
    name: 'web_push',
    publicKey: config.VAPID_PUBLIC_KEY,
    async send(subscription, message) {
      const details = webpush.generateRequestDetails(
        { endpoint: subscription.endpoint, keys: subscription.keys },
        JSON.stringify(message),
        { vapidDetails, TTL: 300 },
      );
      const headers = Object.fromEntries(Object.entries(details.headers).map(([k, v]) => [k, String(v)]));
      const res = await poster.request({ url: details.endpoint, method: details.method, headers, body: details.body });
      if (res.statusCode === 404 || res.statusCode === 410) return 'gone';
      if (res.statusCode >= 300) throw new Error(`push service answered ${res.statusCode}`);
      return 'sent';
    },
  };
}
