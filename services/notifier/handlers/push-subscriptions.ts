import { type BoundHandler, handle } from '@agent-auth/bus';
import { notifierEndpoints as ep } from '@agent-auth/contracts';
import type { createPushSubscriptions } from '../use-cases/push-subscriptions.js';

/** The device's push configuration and subscriptions, on the bus. */
export function pushSubscriptionHandlers(subscriptions: ReturnType<typeof createPushSubscriptions>): BoundHandler[] {
  return [
    handle(ep.pushConfig, async () => subscriptions.config()),
    handle(ep.subscribePush, (subscription) => subscriptions.subscribe(subscription)),
    handle(ep.unsubscribePush, ({ device, endpoint }) => subscriptions.unsubscribe(device, endpoint)),
  ];
}
