import type { RequestContext } from '@agent-auth/bus';
import { type ActionView, type AgentPrincipal, type NewAction, newId } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import {
  amountCentsOf,
  checkCallbackUrl,
  contentHashOf,
  creationAudit,
  newRequestRow,
  type Prepared,
  requestHashOf,
} from '../domain/new-action.js';
import { toActionView } from '../domain/views.js';
import type { ActionsDeps } from './deps.js';
import type { MetadataSeal } from './metadata.js';
import { recordDecision } from '@agent-auth/metrics';

type Deps = Pick<ActionsDeps, 'settings' | 'policy' | 'requests' | 'receipts'> & { metadata: MetadataSeal };

/** A unique violation: here, another replica stored the request of the same idempotency key first. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === '23505';
}

/**
 * Creating an action request: validate what the contract cannot, let the policy decide, then count it against the
 * plan quota and store it with its audit entries in one statement. Spend the policy counted is taken back when the
 * request is not stored.
 */
export function createActionCreation(deps: Deps) {
  const { policy, requests, settings, receipts } = deps;

  const prepare = (agent: AgentPrincipal, action: NewAction, id: string): Prepared => {
    if (action.callback_url) checkCallbackUrl(settings, action.callback_url);
    const contentHash = contentHashOf(action);
    const amountCents = amountCentsOf(action);
    const requestHash = receipts.enabled ? requestHashOf(action, amountCents) : null;
    const metadataEnc = deps.metadata.seal(id, action.metadata);
    return { id, agent, action, amountCents, contentHash, metadataEnc, at: new Date(), requestHash };
  };

  const decide = (p: Prepared, ctx: RequestContext) => {
    const { agent, action } = p;
    const question = {
      action_id: p.id,
      account_id: agent.account_id,
      agent_id: agent.agent_id,
      action_type: action.action_type,
      risk_level: action.risk_level,
      amount_cents: p.amountCents,
      currency: action.currency,
      recipient: action.recipient,
    };
    return policy.decide(question, ctx);
  };

  /**
   * Creates one request. A keyed create (create-once.ts) passes the id its Idempotency-Key fixed: a second insert
   * of that id fails as a whole (quota count included), so a key is counted and stored once.
   */
  return async function create(
    agent: AgentPrincipal,
    action: NewAction,
    ctx: RequestContext,
    id = newId('action'),
  ): Promise<ActionView> {
    const prepared = prepare(agent, action, id);
    const decision = await decide(prepared, ctx);
    // An approval the policy counted must not keep counting for a request that is not stored.
    const releaseSpend = async () => {
      if (decision.outcome !== 'pending' && decision.spend_recorded) {
        await policy.releaseSpend({ action_id: prepared.id, account_id: agent.account_id }, ctx);
      }
    };
    // Every validated request counts against the plan quota, whatever its outcome, in the statement that stores
    // it: counted and stored together, or neither (one refused by the quota is not counted).
    const quota = settings.FREE_PLAN_MONTHLY_ACTIONS;
    // Resolved here by a rule or a limit: the receipt is signed now and stored by the same statement.
    const unsigned = newRequestRow(prepared, decision, null);
    const receipt =
      decision.outcome === 'pending'
        ? null
        : await receipts.sign(
            { ...unsigned, created_at: prepared.at },
            { status: decision.outcome, resolved_by: decision.resolved_by, resolved_at: prepared.at },
          );
    const row = await requests
      .insert({ ...unsigned, receipt }, creationAudit(prepared, decision, receipt), quota)
      .catch(async (err: unknown) => {
        // The same id stored by another replica (one idempotency key): the spend is that request's own.
        if (!isUniqueViolation(err)) await releaseSpend();
        throw err;
      });
    if (!row) {
      await releaseSpend();
      throw errors.quotaExceeded(quota);
    }
    ctx.log.debug({ action_id: prepared.id, status: row.status }, 'action created'); // the gateway's access log is the info line
    recordDecision(row.status, 'policy');
    return toActionView(row, action.metadata ?? {});
  };
}
