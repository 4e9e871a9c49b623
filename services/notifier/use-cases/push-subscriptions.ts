import type { DevicePrincipal, PushSubscriptionRequest } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import type { NotifierDeps } from './deps.js';

/** Devices register and remove their push subscriptions; without a provider there is nothing to register. */
export function createPushSubscriptions(deps: Pick<NotifierDeps, 'push' | 'pushSubscriptions'>) {
  const { push, pushSubscriptions } = deps;
  return {
    config: () => ({ provider: push?.name ?? null, vapid_public_key: push?.publicKey ?? null }),

    async subscribe({ device, endpoint, keys }: PushSubscriptionRequest) {
      if (!push) throw errors.pushNotConfigured();
      const { account_id, device_ref, member_id } = device;
      await pushSubscriptions.upsert({ endpoint, account_id, device_ref, member_id, keys });
      return { subscribed: true as const };
    },

    async unsubscribe(device: DevicePrincipal, endpoint: string) {
      return { deleted: await pushSubscriptions.remove(endpoint, device.account_id) };
    },
  };
}
