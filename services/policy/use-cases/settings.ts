import type { RequestContext } from '@agent-auth/bus';
import {
  type CreateGrantRequest,
  type NewRule,
  type NewSpendingLimit,
  type DevicePrincipal,
  newId,
  policyLimits,
} from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import type { PolicyDeps } from './deps.js';
import { periodWindow } from '../domain/period-windows.js';
import { toGrantView, toLimitView, toRuleView } from '../domain/views.js';

/**
 * Rules and spending limits as the device manages them; every lookup is scoped to the device's account. After a
 * change commits, this replica drops its copy of the account's policy before answering, and every other replica
 * drops its own on the `policy_changed` event (`announceChange`).
 */
export function createSettings(
  deps: Pick<PolicyDeps, 'rules' | 'limits' | 'grants' | 'spend' | 'now' | 'policyCache'> & {
    announceChange: (accountId: string) => void;
  },
) {
  const { rules, limits } = deps;
  const changed = (accountId: string) => {
    deps.policyCache.invalidate(accountId);
    deps.announceChange(accountId);
  };
  return {
    async createRule(rule: NewRule, ctx: RequestContext) {
      const { device } = rule;
      const row = await rules.insert(newId('rule'), device.account_id, rule, policyLimits.rulesPerAccount);
      if (!row) throw errors.tooManyRules(policyLimits.rulesPerAccount);
      changed(device.account_id);
      ctx.log.info({ rule_id: row.id, account_id: device.account_id, decision: row.decision }, 'rule created');
      return toRuleView(row);
    },

    async listRules(device: DevicePrincipal) {
      return { rules: (await rules.list(device.account_id)).map(toRuleView) };
    },

    async deleteRule(device: DevicePrincipal, ruleId: string, ctx: RequestContext) {
      if (!(await rules.delete(device.account_id, ruleId))) throw errors.ruleNotFound(ruleId);
      changed(device.account_id);
      ctx.log.info({ rule_id: ruleId, account_id: device.account_id }, 'rule deleted');
      return { deleted: true as const, id: ruleId };
    },

    async createLimit(limit: NewSpendingLimit, ctx: RequestContext) {
      const { device } = limit;
      const row = await limits.insert(newId('limit'), device.account_id, limit, policyLimits.limitsPerAccount);
      if (!row) throw errors.tooManySpendingLimits(policyLimits.limitsPerAccount);
      await deps.spend.openWindow(device.account_id, row.id, periodWindow(row.period, deps.now()));
      changed(device.account_id);
      ctx.log.info({ limit_id: row.id, account_id: device.account_id, period: row.period }, 'spending limit created');
      return toLimitView(row);
    },

    async listLimits(device: DevicePrincipal) {
      return { spending_limits: (await limits.list(device.account_id)).map(toLimitView) };
    },

    /** A standing grant from a person's approval; every replica drops its copy of the account's grants. */
    async createGrant(req: CreateGrantRequest, ctx: RequestContext) {
      const row = await deps.grants.insert(req);
      changed(req.account_id);
      ctx.log.info({ grant_id: row.id, account_id: req.account_id, created_from: row.created_from }, 'grant created');
      return toGrantView(row);
    },

    async listGrants(device: DevicePrincipal) {
      return { grants: (await deps.grants.list(device.account_id)).map(toGrantView) };
    },

    /** Revokes a grant at once: no replica decides by it after this answers (use is checked against the database). */
    async revokeGrant(device: DevicePrincipal, grantId: string, ctx: RequestContext) {
      const row = await deps.grants.revoke(device.account_id, grantId);
      if (!row) throw errors.grantNotFound(grantId);
      changed(device.account_id);
      ctx.log.info({ grant_id: grantId, account_id: device.account_id }, 'grant revoked');
      return toGrantView(row);
    },

    async deleteLimit(device: DevicePrincipal, limitId: string, ctx: RequestContext) {
      if (!(await limits.delete(device.account_id, limitId))) throw errors.spendingLimitNotFound(limitId);
      changed(device.account_id);
      ctx.log.info({ limit_id: limitId, account_id: device.account_id }, 'spending limit deleted');
      return { deleted: true as const, id: limitId };
    },
  };
}
