import type { Bus, RequestContext } from '@agent-auth/bus';
import {
  type CreateGrantRequest,
  type DecideRequest,
  type DecisionPolicy,
  type DevicePrincipal,
  type GrantView,
  type PolicyDecision,
  policyChanged,
  policyEndpoints,
  policyLanguageEndpoints,
  policyVersion,
  type RecordSpendRequest,
  type ReleaseSpendRequest,
} from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { createNoPolicyAccounts } from './no-policy-accounts.js';

/** As long as the policy replicas keep their copies without hearing of a change (bounds a lost event). */
const NO_POLICY_TTL_MS = 30_000;
const NO_POLICY_ACCOUNTS = 50_000;

/**
 * The seam where the actions service asks for automatic decisions and reports spend, in the policy service's own
 * contracts (libs/contracts/bus/policy.ts). `spend_recorded` of a decision says the approved amount already counts
 * as spent (to be released if the request is never stored).
 */
export interface PolicyDecider {
  decide(input: DecideRequest, ctx: RequestContext): Promise<PolicyDecision>;
  /** Counts an approval by a person as spend; idempotent per action. */
  recordSpend(input: RecordSpendRequest, ctx: RequestContext): Promise<void>;
  /** Takes back spend recorded for an action that did not end up approved; never throws. */
  releaseSpend(input: ReleaseSpendRequest, ctx: RequestContext): Promise<void>;
  /** Creates a standing grant from an approval; idempotent per approval. */
  createGrant(input: CreateGrantRequest, ctx: RequestContext): Promise<GrantView>;
  /** Revokes a grant of the device's account at once (404 when it has none by that id). */
  revokeGrant(device: DevicePrincipal, grantId: string, ctx: RequestContext): Promise<GrantView>;
  /** The account's rules, Cedar policies and time zone, for a replay of its history. */
  decisionPolicy(accountId: string, ctx: RequestContext): Promise<DecisionPolicy>;
}

/** The policy_version of an account without rules or limits. */
const EMPTY_POLICY_VERSION = policyVersion([], []);

/** Used while no policy service is wired in: every request waits for a person, and nothing counts spend. */
export const noAutomaticDecisions: PolicyDecider = {
  async decide() {
    return { outcome: 'pending', policy_version: EMPTY_POLICY_VERSION };
  },
  async recordSpend() {},
  async releaseSpend() {},
  async createGrant() {
    throw errors.serviceUnavailable('policy');
  },
  async revokeGrant() {
    throw errors.serviceUnavailable('policy');
  },
  async decisionPolicy() {
    return { rules: [], policies: [], timezone: 'UTC' };
  },
};

/**
 * The policy service over the bus: the PolicyDecider that services/actions/main.ts and all-in-one wire in. Requests
 * of accounts the policy service said have no policy are answered here until the account's policy changes.
 */
export function policyOverBus(bus: Bus): PolicyDecider {
  const noPolicy = createNoPolicyAccounts({ ttlMs: NO_POLICY_TTL_MS, maxAccounts: NO_POLICY_ACCOUNTS });
  // Subscribed before the service serves (this is wired in first), so no change after a noted answer goes unheard.
  bus.subscribe(policyChanged, ({ account_id }) => noPolicy.drop(account_id));
  const releaseSpend: PolicyDecider['releaseSpend'] = async (input, ctx) => {
    try {
      await bus.request(policyEndpoints.releaseSpend, input, { requestId: ctx.requestId });
    } catch (err) {
      ctx.log.warn({ err, action_id: input.action_id }, 'could not release spend; it stays counted');
    }
  };
  return {
    async decide(input, ctx) {
      // Not released when the decision times out: the action id is not this attempt's alone. A retry of the same
      // create (the gateway's, or the agent's with its Idempotency-Key) sends the same id, and its decision finds
      // the spend already recorded (one row per action id); releasing it here could take back, after the fact, the
      // spend of the request that retry stores approved, and let the limit be passed. If no retry ever stores the
      // request, the spend stays over-counted, which errs on the side of spending less.
      const known = noPolicy.emptyPolicyVersion(input.account_id);
      if (known) return { outcome: 'pending', policy_version: known };
      const ticket = noPolicy.ticket();
      const decision = await bus.request(policyEndpoints.decide, input, { requestId: ctx.requestId });
      if (decision.outcome === 'pending' && decision.no_policy) {
        noPolicy.note(input.account_id, decision.policy_version, ticket);
      }
      return decision;
    },
    async recordSpend(input, ctx) {
      // Never released on a time-out here: the request is still approvable; a racing approval may count on this row.
      await bus.request(policyEndpoints.recordSpend, input, { requestId: ctx.requestId });
    },
    releaseSpend,
    createGrant: (input, ctx) => bus.request(policyEndpoints.createGrant, input, { requestId: ctx.requestId }),
    revokeGrant: (device, grantId, ctx) =>
      bus.request(policyEndpoints.revokeGrant, { device, grant_id: grantId }, { requestId: ctx.requestId }),
    decisionPolicy: (accountId, ctx) =>
      bus.request(policyLanguageEndpoints.decisionPolicy, { account_id: accountId }, { requestId: ctx.requestId }),
  };
}
