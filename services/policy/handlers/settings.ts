import { type BoundHandler, handle, handleOnce } from '@agent-auth/bus';
import { policyEndpoints as ep } from '@agent-auth/contracts';
import type { createSettings } from '../use-cases/settings.js';

/** The device's rules and spending limits, on the bus. */
export function settingsHandlers(settings: ReturnType<typeof createSettings>): BoundHandler[] {
  return [
    handleOnce(ep.createRule, (rule, ctx) => settings.createRule(rule, ctx)),
    handle(ep.listRules, ({ device }) => settings.listRules(device)),
    handleOnce(ep.deleteRule, ({ device, rule_id }, ctx) => settings.deleteRule(device, rule_id, ctx)),
    handleOnce(ep.createLimit, (limit, ctx) => settings.createLimit(limit, ctx)),
    handle(ep.listLimits, ({ device }) => settings.listLimits(device)),
    handleOnce(ep.deleteLimit, ({ device, limit_id }, ctx) => settings.deleteLimit(device, limit_id, ctx)),
    handleOnce(ep.createGrant, (req, ctx) => settings.createGrant(req, ctx)),
    handle(ep.listGrants, ({ device }) => settings.listGrants(device)),
    handleOnce(ep.revokeGrant, ({ device, grant_id }, ctx) => settings.revokeGrant(device, grant_id, ctx)),
  ];
}
