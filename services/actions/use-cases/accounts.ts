import type { RequestContext } from '@agent-auth/bus';
import type { AccountView, DevicePrincipal, Plan, PublicKey } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { normalizePublicKey } from '../domain/device-signatures.js';
import { monthlyQuota } from '../domain/quota.js';
import type { ActionsDeps } from './deps.js';

type Deps = Pick<ActionsDeps, 'accounts' | 'identities' | 'settings'>;

/** The account's plan and quota, and the device's signing key. */
export function createAccounts(deps: Deps) {
  const { accounts, identities, settings } = deps;

  /** The account as the device's member sees it: with who they are and their role (what the app offers them). */
  const view = async (device: DevicePrincipal): Promise<AccountView> => {
    const accountId = device.account_id;
    const usage = await accounts.usage(accountId);
    if (!usage) throw errors.accountNotFound();
    return {
      account_id: accountId,
      member_id: device.member_id,
      role: device.role,
      plan: usage.plan,
      actions_this_month: usage.actions,
      monthly_quota: monthlyQuota(usage.plan, settings.FREE_PLAN_MONTHLY_ACTIONS),
    };
  };

  return {
    view,

    async setPlan(device: DevicePrincipal, plan: Plan, ctx: RequestContext): Promise<AccountView> {
      await accounts.setPlan(device.account_id, plan, `device:${device.device_ref}`);
      ctx.log.info({ account_id: device.account_id, plan }, 'plan changed');
      return view(device);
    },

    async setPublicKey(device: DevicePrincipal, publicKey: PublicKey) {
      const key = normalizePublicKey(publicKey);
      const row = await identities.setDevicePublicKey(device.device_ref, key as string, `device:${device.device_ref}`);
      if (!row) throw errors.deviceNotFound();
      return { device_name: row.name, has_public_key: true as const, updated_at: new Date().toISOString() };
    },
  };
}
