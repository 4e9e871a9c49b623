import { actionsEndpoints as ep, type Plan } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { handle, type BoundHandler } from '@agent-auth/bus';
import type { ActionsDeps } from './deps.js';
import { normalizePublicKey } from './identities.js';
import { enrollTotp } from './totp.js';

/** The monthly quota of a plan: the free plan's from configuration, none on the unlimited plan. */
export function monthlyQuota(plan: Plan, freeQuota: number): number | null {
  return plan === 'unlimited' ? null : freeQuota;
}

/** The detail of the 402 once the free plan's quota is used up. */
export function quotaExceededDetail(freeQuota: number): string {
  return `Monthly quota of ${freeQuota} actions on the free plan is used up; it renews on the 1st of next month (UTC), or switch to the unlimited plan with POST /account/plan {"plan": "unlimited"}`;
}

async function accountView(deps: ActionsDeps, accountId: string) {
  const usage = await deps.accounts.usage(accountId);
  if (!usage) throw errors.notFound('Account not found');
  return { account_id: accountId, plan: usage.plan, actions_this_month: usage.actions, monthly_quota: monthlyQuota(usage.plan, deps.config.FREE_PLAN_MONTHLY_ACTIONS) };
}

/** The account's plan and quota, TOTP enrolment and the device's signing key. */
export function accountHandlers(deps: ActionsDeps): BoundHandler[] {
  return [
    handle(ep.getAccount, ({ device }) => accountView(deps, device.account_id)),

    handle(ep.setPlan, async ({ device, body }, ctx) => {
      await deps.accounts.setPlan(device.account_id, body.plan, `device:${device.device_ref}`);
      ctx.log.info({ account_id: device.account_id, plan: body.plan }, 'plan changed');
      return accountView(deps, device.account_id);
    }),

    handle(ep.enrollTotp, ({ device }) => enrollTotp(deps, device.account_id, `device:${device.device_ref}`)),

    handle(ep.setPublicKey, async ({ device, body }) => {
      const row = await deps.identities.setDevicePublicKey(device.device_ref, normalizePublicKey(body.public_key)!, `device:${device.device_ref}`);
      if (!row) throw errors.notFound('Device not found');
      return { device_name: row.name, has_public_key: true as const, updated_at: new Date().toISOString() };
    }),
  ];
}
