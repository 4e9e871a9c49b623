import type { RequestContext } from '@agent-auth/bus';
import {
  cedarLimits,
  type DecisionPolicy,
  type DevicePrincipal,
  type NewPolicy,
  newId,
  type SetSettingsRequest,
} from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { CEDAR_SCHEMA, cedarPolicyProblem, cedarSchemaJson } from '@agent-auth/policy-language';
import type { PolicyDeps } from './deps.js';
import { toPolicyView, toRuleView } from '../domain/views.js';

/** The canonical spelling of a time zone the contract accepted (`europe/paris` is `Europe/Paris`). */
const canonicalZone = (timezone: string) =>
  new Intl.DateTimeFormat('en-US', { timeZone: timezone }).resolvedOptions().timeZone;

/**
 * Cedar policies and the account's time zone as the device manages them, and what a replay reads of an account.
 * A change drops every replica's copy of the account's policy, as a change of rules does.
 */
export function createPolicies(
  deps: Pick<PolicyDeps, 'rules' | 'cedarPolicies' | 'accountSettings' | 'policyCache'> & {
    announceChange: (accountId: string) => void;
  },
) {
  const changed = (accountId: string) => {
    deps.policyCache.invalidate(accountId);
    deps.announceChange(accountId);
  };
  // Cedar's schema as JSON, converted once by Cedar itself.
  let schemaJson: Record<string, unknown> | undefined;
  return {
    /** Stores a Cedar policy once Cedar's validator accepts it against the published schema. */
    async createPolicy({ device, name, cedar }: NewPolicy, ctx: RequestContext) {
      const problem = cedarPolicyProblem(cedar);
      if (problem) throw errors.invalidPolicy(problem);
      const row = await deps.cedarPolicies.insert(
        { id: newId('policy'), account_id: device.account_id, name, cedar },
        cedarLimits.policiesPerAccount,
      );
      if (!row) throw errors.tooManyPolicies(cedarLimits.policiesPerAccount);
      changed(device.account_id);
      ctx.log.info({ policy_id: row.id, account_id: device.account_id }, 'cedar policy created');
      return toPolicyView(row);
    },

    async listPolicies(device: DevicePrincipal) {
      return { policies: (await deps.cedarPolicies.list(device.account_id)).map(toPolicyView) };
    },

    async deletePolicy(device: DevicePrincipal, policyId: string, ctx: RequestContext) {
      if (!(await deps.cedarPolicies.delete(device.account_id, policyId))) throw errors.policyNotFound(policyId);
      changed(device.account_id);
      ctx.log.info({ policy_id: policyId, account_id: device.account_id }, 'cedar policy deleted');
      return { deleted: true as const, id: policyId };
    },

    policySchema() {
      schemaJson ??= cedarSchemaJson();
      return { schema: CEDAR_SCHEMA, schema_json: schemaJson };
    },

    async getSettings(device: DevicePrincipal) {
      return { timezone: await deps.accountSettings.timezone(device.account_id) };
    },

    /** Sets the account's time zone; decisions read `local_hour` and `weekday` on it from the next request. */
    async setSettings({ device, timezone }: SetSettingsRequest, ctx: RequestContext) {
      const zone = canonicalZone(timezone);
      await deps.accountSettings.setTimezone(device.account_id, zone);
      changed(device.account_id);
      ctx.log.info({ account_id: device.account_id, timezone: zone }, 'account settings changed');
      return { timezone: zone };
    },

    /** The account's rules, Cedar policies and time zone, as a replay of its history reads them. */
    async decisionPolicy(accountId: string): Promise<DecisionPolicy> {
      const [rules, policies, timezone] = await Promise.all([
        deps.rules.list(accountId),
        deps.cedarPolicies.list(accountId),
        deps.accountSettings.timezone(accountId),
      ]);
      return { rules: rules.map(toRuleView), policies: policies.map(toPolicyView), timezone };
    },
  };
}
