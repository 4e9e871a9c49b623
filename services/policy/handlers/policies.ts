import { type BoundHandler, handle, handleOnce } from '@agent-auth/bus';
import { policyLanguageEndpoints as ep } from '@agent-auth/contracts';
import type { createPolicies } from '../use-cases/policies.js';

/** The device's Cedar policies and account settings, and what a replay reads, on the bus. */
export function policyLanguageHandlers(policies: ReturnType<typeof createPolicies>): BoundHandler[] {
  return [
    handleOnce(ep.createPolicy, (req, ctx) => policies.createPolicy(req, ctx)),
    handle(ep.listPolicies, ({ device }) => policies.listPolicies(device)),
    handleOnce(ep.deletePolicy, ({ device, policy_id }, ctx) => policies.deletePolicy(device, policy_id, ctx)),
    handle(ep.policySchema, async () => policies.policySchema()),
    handle(ep.getSettings, ({ device }) => policies.getSettings(device)),
    handle(ep.setSettings, (req, ctx) => policies.setSettings(req, ctx)),
    handle(ep.decisionPolicy, ({ account_id }) => policies.decisionPolicy(account_id)),
  ];
}
