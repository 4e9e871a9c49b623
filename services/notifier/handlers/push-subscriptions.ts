import { notifierEndpoints as ep } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { handle, type BoundHandler } from '@agent-auth/bus';
import type { NotifierDeps } from './deps.js';

/** Devices register and remove their push subscriptions; without a provider there is nothing to register. */
export function pushSubscriptionHandlers(deps: NotifierDeps): BoundHandler[] {
  return [
    handle(ep.pushConfig, async () => ({ provider: deps.push?.name ?? null, vapid_public_key: deps.push?.publicKey ?? null })),
    handle(ep.subscribePush, async ({ device, body }) => {
      if (!deps.push) throw errors.conflict('No push provider is configured; use the live stream GET /device/events');
      await deps.pushSubscriptions.upsert({ endpoint: body.endpoint, account_id: device.account_id, device_ref: device.device_ref, keys: body.keys });
      return { subscribed: true as const };
    }),
    handle(ep.unsubscribePush, async ({ device, body }) => ({ deleted: await deps.pushSubscriptions.remove(body.endpoint, device.account_id) })),
  ];
}
