import type { RequestContext } from '@agent-auth/bus';
import {
  type ActionView,
  type AgentPrincipal,
  type NewAction,
  newId,
  metadataScalarsOf,
  type PolicyDecision,
  toolCallFactsOf,
} from '@agent-auth/contracts';
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
import type { NewRequest } from '../domain/rows.js';
import { toActionView } from '../domain/views.js';
import type { ActionsDeps } from './deps.js';
import type { MetadataSeal } from './metadata.js';
import { recordDecision } from '@agent-auth/metrics';

type Deps = Pick<ActionsDeps, 'settings' | 'policy' | 'requests' | 'receipts'> & { metadata: MetadataSeal };
type ResolvedDecision = Exclude<PolicyDecision, { outcome: 'pending' }>;

/**
 * What one create is given: the agent, its action, and the id to store it under when the caller fixed one (the id
 * an Idempotency-Key claimed, or the one the gateway chose); a new id otherwise. The create message itself fits.
 */
export interface CreateInput {
  agent: AgentPrincipal;
  action: NewAction;
  action_id?: string;
  /**
   * For a request that would wait for a person: an earlier request the caller's retry should join instead (a hook
   * call's first request), answered in place of storing a new one. Asked only then, so a call the policy decides at
   * once costs no lookup.
   */
  joinPending?: () => Promise<ActionView | undefined>;
  /** How the request came in when not over the actions API itself (`ciba`), named in its creation's audit entry. */
  channel?: string;
}

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

  /** Checks what the contract cannot check (callback URL, vault metadata, amount), hashes and seals the rest. */
  const checkAndSeal = ({ agent, action, channel }: CreateInput, id: string): Prepared => {
    if (action.callback_url) checkCallbackUrl(settings, action.callback_url);
    const contentHash = contentHashOf(action);
    const amountCents = amountCentsOf(action);
    const requestHash = receipts.enabled ? requestHashOf(action, amountCents) : null;
    const metadataEnc = deps.metadata.seal(id, action.metadata);
    return { id, agent, action, amountCents, contentHash, metadataEnc, at: new Date(), requestHash, channel };
  };

  /** Asks the policy whether a rule, a limit or a grant decides the request now, or leaves it to a person. */
  const askPolicy = (p: Prepared, ctx: RequestContext): Promise<PolicyDecision> => {
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
      // What rules' conditions and Cedar policies read besides: the title, and the metadata's scalar values.
      title: action.title,
      reversible: action.reversible,
      metadata: metadataScalarsOf(action.metadata),
    };
    // A tool call's tool, session and command, for grants with a match; other requests go as they are.
    const call = toolCallFactsOf(action.metadata);
    return policy.decide(call ? { ...question, ...call } : question, ctx);
  };

  /** The receipt of a request a rule, limit or grant resolved now: signed here, stored by the same statement. */
  const signResolution = (p: Prepared, decision: ResolvedDecision, row: NewRequest): Promise<string | null> =>
    receipts.sign(
      { ...row, created_at: p.at },
      { status: decision.outcome, resolved_by: decision.resolved_by, resolved_at: p.at },
    );

  /** Takes back the spend the policy counted for an automatic approval whose request was not stored. */
  const releaseCountedSpend = async (p: Prepared, decision: PolicyDecision, ctx: RequestContext): Promise<void> => {
    if (decision.outcome !== 'pending' && decision.spend_recorded) {
      await policy.releaseSpend({ action_id: p.id, account_id: p.agent.account_id }, ctx);
    }
  };

  /**
   * Creates one request. A keyed create (create-once.ts) passes the id its Idempotency-Key fixed: a second insert
   * of that id fails as a whole (quota count included), so a key is counted and stored once.
   */
  return async function create(input: CreateInput, ctx: RequestContext): Promise<ActionView> {
    const prepared = checkAndSeal(input, input.action_id ?? newId('action'));
    const decision = await askPolicy(prepared, ctx);
    if (decision.outcome === 'pending' && input.joinPending) {
      const joined = await input.joinPending();
      if (joined) return joined;
    }
    const row = newRequestRow(prepared, decision, null);
    if (decision.outcome !== 'pending') row.receipt = await signResolution(prepared, decision, row);
    // Every validated request counts against the plan quota, whatever its outcome, in the statement that stores
    // it: counted and stored together, or neither (one refused by the quota is not counted).
    const freeQuota = settings.FREE_PLAN_MONTHLY_ACTIONS;
    const audit = creationAudit(prepared, decision, row.receipt);
    const stored = await requests.insertWithinQuota({ row, audit, freeQuota }).catch(async (err: unknown) => {
      // The same id stored by another replica (one idempotency key): the spend is that request's own.
      if (!isUniqueViolation(err)) await releaseCountedSpend(prepared, decision, ctx);
      throw err;
    });
    if (!stored) {
      await releaseCountedSpend(prepared, decision, ctx);
      throw errors.quotaExceeded(freeQuota);
    }
    ctx.log.debug({ action_id: prepared.id, status: stored.status }, 'action created'); // the gateway's access log is the info line
    recordDecision(stored.status, 'policy');
    return toActionView(stored, input.action.metadata ?? {});
  };
}
