import { newId, policyEndpoints as ep, policyLimits, toCents } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { handle, type BoundHandler } from '@agent-auth/bus';
import type { PolicyDeps } from './deps.js';
import { periodWindow } from './period-windows.js';
import { toLimitView, toRuleView } from './views.js';

/** Rules and spending limits as the device manages them; every lookup is scoped to the device's account. */
export function settingsHandlers(deps: PolicyDeps): BoundHandler[] {
  return [
    handle(ep.createRule, async ({ device, body }, ctx) => {
      const row = await deps.rules.insert(newId('rule'), device.account_id, body, policyLimits.rulesPerAccount);
      if (!row) throw errors.conflict(`Too many rules: an account can have at most ${policyLimits.rulesPerAccount}`);
      ctx.log.info({ rule_id: row.id, account_id: device.account_id, decision: row.decision }, 'rule created');
      return toRuleView(row);
    }),

    handle(ep.listRules, async ({ device }) => ({ rules: (await deps.rules.list(device.account_id)).map(toRuleView) })),

    handle(ep.deleteRule, async ({ device, rule_id }, ctx) => {
      if (!(await deps.rules.delete(device.account_id, rule_id))) throw errors.notFound(`Rule '${rule_id}' not found`);
      ctx.log.info({ rule_id, account_id: device.account_id }, 'rule deleted');
      return { deleted: true as const, id: rule_id };
    }),

    handle(ep.createLimit, async ({ device, body }, ctx) => {
      const { amount_limit, ...scope } = body;
      const row = await deps.limits.insert(newId('limit'), device.account_id, { ...scope, amount_limit_cents: toCents(amount_limit) }, policyLimits.limitsPerAccount);
      if (!row) throw errors.conflict(`Too many spending limits: an account can have at most ${policyLimits.limitsPerAccount}`);
      await deps.spend.openWindow(device.account_id, row.id, periodWindow(row.period, deps.now()));
      ctx.log.info({ limit_id: row.id, account_id: device.account_id, period: row.period }, 'spending limit created');
      return toLimitView(row);
    }),

    handle(ep.listLimits, async ({ device }) => ({ spending_limits: (await deps.limits.list(device.account_id)).map(toLimitView) })),

    handle(ep.deleteLimit, async ({ device, limit_id }, ctx) => {
      if (!(await deps.limits.delete(device.account_id, limit_id))) throw errors.notFound(`Spending limit '${limit_id}' not found`);
      ctx.log.info({ limit_id, account_id: device.account_id }, 'spending limit deleted');
      return { deleted: true as const, id: limit_id };
    }),
  ];
}
