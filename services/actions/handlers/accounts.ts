import { type BoundHandler, handle, handleOnce } from '@agent-auth/bus';
import { actionsEndpoints as ep } from '@agent-auth/contracts';
import type { UseCases } from '../use-cases/use-cases.js';

/** The account's plan and quota, TOTP enrolment and the device's signing key, on the bus. */
export function accountHandlers(uc: UseCases): BoundHandler[] {
  return [
    handle(ep.getAccount, ({ device }) => uc.accounts.view(device)),
    handle(ep.setPlan, ({ device, plan }, ctx) => uc.accounts.setPlan(device, plan, ctx)),
    // Kept per call, sealed: a resend gets the secret the first send stored, not 409 totp_already_configured.
    handleOnce(ep.enrollTotp, ({ device }) => uc.totp.enroll(device)),
    handle(ep.setPublicKey, ({ device, public_key }) => uc.accounts.setPublicKey(device, public_key)),
  ];
}
