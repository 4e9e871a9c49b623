import { type BoundHandler, handle, handleOnce } from '@agent-auth/bus';
import { actionsEndpoints as ep, oidcEndpoints } from '@agent-auth/contracts';
import type { UseCases } from '../use-cases/use-cases.js';

/** An account's members on the bus: inviting, joining, listing, changing, removing. */
export function memberHandlers(uc: UseCases): BoundHandler[] {
  const { members } = uc;
  return [
    // Kept per call, sealed (their answers hold an invite's code, a device id): a resend gets them, not a second
    // member or device.
    handleOnce(ep.createMember, (asked) => members.create(asked)),
    handleOnce(ep.joinMember, (asked) => members.join(asked)),
    // A device for the member a sign-in with the company's identity provider verified (the identity service asks).
    handleOnce(oidcEndpoints.bindMemberDevice, (asked) => members.addDeviceByEmail(asked)),
    handle(ep.listMembers, ({ device }) => members.list(device)),
    handle(ep.membersNamed, ({ account_id, refs }) => members.named(account_id, refs)),
    handleOnce(ep.updateMember, (asked) => members.update(asked)),
    handleOnce(ep.removeMember, ({ device, member_id }) => members.remove(device, member_id)),
  ];
}
