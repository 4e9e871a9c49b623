import type { Bus, RequestContext } from '@agent-auth/bus';
import { oidcEndpoints } from '@agent-auth/contracts';

/** The account's members as the sign-in sees them: the actions service keeps them (beside the devices). */
export interface MemberDevices {
  /** A new device for the current member with this verified email; its id (a secret) answered once. */
  add(input: { email: string; device_name: string | null }, ctx: RequestContext): Promise<string>;
}

export function memberDevicesOverBus(bus: Bus): MemberDevices {
  return {
    async add(input, ctx) {
      const joined = await bus.request(oidcEndpoints.bindMemberDevice, input, { requestId: ctx.requestId });
      return joined.device_id;
    },
  };
}
