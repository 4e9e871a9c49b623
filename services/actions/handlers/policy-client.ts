import type { Bus } from '@agent-auth/bus';
import { policyEndpoints } from '@agent-auth/contracts';
import { isAppError } from '@agent-auth/errors';
import type { PolicyDecider } from './decision.js';

/** The policy service over the bus: the PolicyDecider that services/actions/main.ts and all-in-one wire in. */
export function policyOverBus(bus: Bus): PolicyDecider {
  const releaseSpend: PolicyDecider['releaseSpend'] = async (input, ctx) => {
    try {
      await bus.request(policyEndpoints.releaseSpend, input, { requestId: ctx.requestId });
    } catch (err) {
      ctx.log.warn({ err, action_id: input.action_id }, 'could not release spend; it stays counted');
    }
  };
  return {
    async decide(input, ctx) {
      try {
        return await bus.request(policyEndpoints.decide, input, { requestId: ctx.requestId });
      } catch (err) {
        // A decision that timed out may still have recorded its approval as spend, for a request that will now
        // never be stored. Releasing is safe (the action id is new, nothing else counts on it); if the release is
        // lost as well, the spend stays over-counted, which errs on the side of spending less.
        if (isAppError(err) && err.status === 504) await releaseSpend({ action_id: input.action_id, account_id: input.account_id }, ctx);
        throw err;
      }
    },
    async recordSpend(input, ctx) {
      // Never released on a time-out here: the request is still approvable, and a racing approval may count on this row.
      await bus.request(policyEndpoints.recordSpend, input, { requestId: ctx.requestId });
    },
    releaseSpend,
  };
}
