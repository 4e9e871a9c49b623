import { z } from 'zod';
import { defineEndpoint, Empty } from './envelope.js';
import { DevicePrincipal } from './actions.js';
import { PushConfig, PushSubscriptionBody, PushUnsubscribeBody } from '../http/notifications.js';

/** The notifier's message catalog: devices' push subscriptions. */
export const notifierEndpoints = {
  health: defineEndpoint('notifier', 'health', Empty, z.object({ ok: z.literal(true) })),
  pushConfig: defineEndpoint('notifier', 'push_config', z.object({ device: DevicePrincipal }), PushConfig),
  subscribePush: defineEndpoint(
    'notifier',
    'subscribe_push',
    z.object({ device: DevicePrincipal, body: PushSubscriptionBody }),
    z.object({ subscribed: z.literal(true) }),
  ),
  unsubscribePush: defineEndpoint(
    'notifier',
    'unsubscribe_push',
    z.object({ device: DevicePrincipal, body: PushUnsubscribeBody }),
    z.object({ deleted: z.boolean() }),
  ),
} as const;
