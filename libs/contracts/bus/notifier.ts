import { z } from 'zod';
import { defineEndpoint, Empty } from './envelope.js';
import { DevicePrincipal } from './actions.js';
import { PushConfig, type PushSubscriptionBody, type PushUnsubscribeBody } from '../http/notifications.js';

/** notifier.v2.subscribe_push: a device's Web Push subscription (the browser's endpoint and its keys). */
export const PushSubscriptionRequest = z.object({
  device: DevicePrincipal,
  endpoint: z.string(),
  keys: z.object({ p256dh: z.string(), auth: z.string() }),
});
export type PushSubscriptionRequest = z.infer<typeof PushSubscriptionRequest>;

/** The bus message of a validated POST /device/push-subscriptions body. */
export function pushSubscriptionRequestOf(
  device: DevicePrincipal,
  body: PushSubscriptionBody,
): PushSubscriptionRequest {
  return { device, endpoint: body.endpoint, keys: { p256dh: body.keys.p256dh, auth: body.keys.auth } };
}

/** notifier.v2.unsubscribe_push: a device removes the subscription of one endpoint. */
export const PushUnsubscribeRequest = z.object({ device: DevicePrincipal, endpoint: z.string() });
export type PushUnsubscribeRequest = z.infer<typeof PushUnsubscribeRequest>;

/** The bus message of a validated DELETE /device/push-subscriptions body. */
export function pushUnsubscribeRequestOf(device: DevicePrincipal, body: PushUnsubscribeBody): PushUnsubscribeRequest {
  return { device, endpoint: body.endpoint };
}

/**
 * notifier.v1.email_invite: an invite to send by email (with SMTP_URL set). The join link carries the code, a
 * bearer secret: the notifier logs nothing of the message and keeps the email only until it is sent.
 */
export const InviteEmailRequest = z.object({
  account_id: z.string(),
  member_id: z.string(),
  to: z.string(),
  name: z.string(),
  code: z.string(),
  expires_at: z.string(),
  /** Where the device app is served (`<origin>/app/`): the link of the email. */
  app_origin: z.string(),
});
export type InviteEmailRequest = z.infer<typeof InviteEmailRequest>;

/** The notifier's message catalog: devices' push subscriptions, and invites by email. */
export const notifierEndpoints = {
  health: defineEndpoint('notifier', 'health', Empty, z.object({ ok: z.literal(true) })),
  pushConfig: defineEndpoint('notifier', 'push_config', z.object({ device: DevicePrincipal }), PushConfig),
  // v2: messages of their own (v1 carried the HTTP bodies).
  subscribePush: defineEndpoint(
    'notifier',
    'subscribe_push',
    PushSubscriptionRequest,
    z.object({ subscribed: z.literal(true) }),
    2,
  ),
  unsubscribePush: defineEndpoint(
    'notifier',
    'unsubscribe_push',
    PushUnsubscribeRequest,
    z.object({ deleted: z.boolean() }),
    2,
  ),
  emailInvite: defineEndpoint('notifier', 'email_invite', InviteEmailRequest, z.object({ queued: z.boolean() })),
} as const;
