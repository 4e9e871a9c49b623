import { z } from 'zod';
import { StoredText } from '../validation.js';

/** Body of POST /device/push-subscriptions: a browser PushSubscription as JSON.stringify gives it. */
export const PushSubscriptionBody = z.object({
  endpoint: StoredText()
    .max(2048)
    .refine((u) => URL.canParse(u) && new URL(u).protocol === 'https:', 'must be an https URL'),
  keys: z.object({
    p256dh: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[A-Za-z0-9_=+/-]+$/, 'must be base64url'),
    auth: z
      .string()
      .min(1)
      .max(100)
      .regex(/^[A-Za-z0-9_=+/-]+$/, 'must be base64url'),
  }),
});
export type PushSubscriptionBody = z.infer<typeof PushSubscriptionBody>;

/** Body of DELETE /device/push-subscriptions. */
export const PushUnsubscribeBody = z.object({ endpoint: StoredText().max(2048) });
export type PushUnsubscribeBody = z.infer<typeof PushUnsubscribeBody>;

/** GET /device/push-config: what a device needs to subscribe (null key: no push provider, live stream only). */
export const PushConfig = z.object({
  provider: z.enum(['web_push']).nullable(),
  vapid_public_key: z.string().nullable(),
});
