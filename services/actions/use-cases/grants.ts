import type { RequestContext } from '@agent-auth/bus';
import {
  type ActionType,
  type DevicePrincipal,
  type GrantRequest,
  type GrantView,
  newId,
  toCents,
} from '@agent-auth/contracts';
import type { RequestRow } from '../domain/rows.js';
import type { ActionsDeps } from './deps.js';

type Deps = Pick<ActionsDeps, 'requests' | 'policy'>;

/**
 * Standing grants as the actions service sees them: made from a person's approval, revoked by the
 * device; each creation and revocation joins the audit trail of the request the grant came from (each use is in the
 * trail of the request it approved).
 */
export function createGrants(deps: Deps) {
  const { requests, policy } = deps;
  return {
    /** The id the grant an approval asks for will have, fixed before the approval so its audit entry can name it. */
    newGrantId: () => newId('grant'),

    /**
     * Creates the grant an approval of `row` asked for, scoped to the request's agent, type, recipient, currency and,
     * with a match, to the tool calls it names.
     */
    async createFrom(
      device: DevicePrincipal,
      row: RequestRow,
      terms: GrantRequest,
      grantId: string,
      ctx: RequestContext,
    ): Promise<GrantView> {
      const grant = await policy.createGrant(
        {
          grant_id: grantId,
          account_id: device.account_id,
          created_from: row.id,
          agent_id: row.agent_id,
          action_type: row.action_type as ActionType,
          recipient: row.recipient,
          currency: row.currency,
          duration_seconds: terms.duration_seconds,
          max_amount_cents: terms.max_amount === null ? null : toCents(terms.max_amount),
          max_uses: terms.max_uses,
          match: terms.match,
        },
        ctx,
      );
      await requests.appendAudit(row.id, device.account_id, {
        event: 'grant_created',
        actor: `device:${device.device_ref}`,
        detail: {
          grant_id: grant.grant_id,
          expires_at: grant.expires_at,
          max_amount: grant.max_amount,
          max_uses: grant.max_uses,
          match: grant.match,
        },
      });
      ctx.log.info({ grant_id: grant.grant_id, created_from: row.id }, 'grant created');
      return grant;
    },

    /** Revokes a grant of the device's account at once (404 otherwise), in the trail of the request it came from. */
    async revoke(device: DevicePrincipal, grantId: string, ctx: RequestContext): Promise<GrantView> {
      const grant = await policy.revokeGrant(device, grantId, ctx);
      await requests.appendAudit(grant.created_from, device.account_id, {
        event: 'grant_revoked',
        actor: `device:${device.device_ref}`,
        detail: { grant_id: grant.grant_id, uses: grant.uses, spent: grant.spent },
      });
      return grant;
    },
  };
}
export type Grants = ReturnType<typeof createGrants>;
