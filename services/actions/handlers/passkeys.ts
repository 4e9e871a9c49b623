import { type BoundHandler, handle, handleOnce } from '@agent-auth/bus';
import { actionsEndpoints as ep } from '@agent-auth/contracts';
import type { UseCases } from '../use-cases/use-cases.js';

/** A device's passkeys on the bus: creation options, registration, listing and removal. */
export function passkeyHandlers(uc: UseCases): BoundHandler[] {
  const { passkeys } = uc;
  return [
    handle(ep.passkeyOptions, ({ device, relying_party }) => passkeys.options(device, relying_party)),
    handleOnce(ep.registerPasskey, ({ device, relying_party, registration }, ctx) =>
      passkeys.register(device, relying_party, registration, ctx),
    ),
    handle(ep.listPasskeys, ({ device }) => passkeys.list(device)),
    handleOnce(ep.deletePasskey, ({ device, passkey_id }) => passkeys.remove(device, passkey_id)),
  ];
}
