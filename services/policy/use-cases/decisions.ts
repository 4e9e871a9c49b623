import type { RequestContext } from '@agent-auth/bus';
import {
  type AgentPrincipal,
  type DecideRequest,
  fromCents,
  type PolicyDecision,
  type RecordSpendRequest,
  type ReleaseSpendRequest,
  type RuleDecision,
} from '@agent-auth/contracts';
import { automaticMatch, momentOf } from '@agent-auth/policy-language';
import type { PolicyLimit } from '../domain/account-policy.js';
import type { CachedPolicy } from '../store/policy-cache.js';
import type { SpendScope } from '../store/spend.js';
import type { PolicyDeps } from './deps.js';
import { firstExceededLimit, type LimitStanding, limitApplies, summarize } from '../domain/limit-checks.js';
import { type PeriodWindows, periodWindows } from '../domain/period-windows.js';
import { coveringGrants } from '../domain/grant-matching.js';
import { routingOf } from '../domain/routing.js';

/** A decision before the version of the policy it was taken under is attached (the receipts' policy_version). */
type Verdict = PolicyDecision extends infer D ? (D extends unknown ? Omit<D, 'policy_version'> : never) : never;

const PENDING: Verdict = { outcome: 'pending' };

/** What settles a request: the first matching rule, or the Cedar policy that matched when no rule did. */
interface Decider {
  name: string;
  decision: RuleDecision;
  quorum: number | null;
  /** `rule:<name>` or `policy:<name>` in the request's resolved_by. */
  cites: 'rule' | 'policy';
}

/** The rule that matches the request, else the Cedar policy (a forbid before a permit); undefined: neither. */
function deciderOf(policy: CachedPolicy, req: DecideRequest, now: Date): Decider | undefined {
  const match = automaticMatch(policy, req, req.action_id, momentOf(now, policy.timezone));
  if (!match) return undefined;
  if (match.rule) return { ...match.rule, cites: 'rule' };
  const { effect, policy: cedar } = match.cedar;
  return {
    name: cedar.name,
    decision: effect === 'permit' ? 'auto_approve' : 'auto_deny',
    quorum: null,
    cites: 'policy',
  };
}

function byRule(rule: Decider, spendRecorded: boolean): Verdict {
  // A quorum rule decides that the request waits for that many devices of the account.
  if (rule.decision === 'require_quorum') return { outcome: 'pending', rule_applied: rule.name, quorum: rule.quorum! };
  // An ask rule leaves it to people, whatever a grant or a Cedar policy would have said.
  if (rule.decision === 'ask') return { outcome: 'pending', rule_applied: rule.name };
  return {
    outcome: rule.decision === 'auto_approve' ? 'approved' : 'denied',
    resolved_by: `${rule.cites}:${rule.name}`,
    rule_applied: rule.name,
    spend_recorded: spendRecorded,
  };
}

/** A limit's spend scope in the window of its period, from the windows of one moment (periodWindows). */
function scopeOf(limit: PolicyLimit, windows: PeriodWindows): SpendScope {
  const { start, end } = windows[limit.period];
  return { id: limit.id, start, end, agent_id: limit.agent_id, action_type: limit.action_type };
}

/**
 * The denial by the first covering limit that `amountCents` more would take past its figure, if any, from the spend
 * the database reported for each (a limit it did not report on is left out: the copy knew a limit it no longer has).
 */
function limitDenial(
  amountCents: number,
  covering: readonly PolicyLimit[],
  spent: ReadonlyMap<string, number>,
): Verdict | undefined {
  const standings: LimitStanding<PolicyLimit>[] = [];
  for (const limit of covering) {
    const spentCents = spent.get(limit.id);
    if (spentCents !== undefined)
      standings.push({ limit, limit_cents: limit.amount_limit_cents, spent_cents: spentCents });
  }
  const over = firstExceededLimit(standings, amountCents);
  if (!over) return undefined;
  return {
    outcome: 'denied',
    resolved_by: `spending_limit:${over.limit.id}`,
    rule_applied: null,
    spending_limit_exceeded: {
      period: over.limit.period,
      limit: fromCents(over.limit_cents),
      spent: fromCents(over.spent_cents),
      requested: fromCents(amountCents),
    },
    spend_recorded: false,
  };
}

function spendOf(req: Pick<DecideRequest, 'action_id' | 'agent_id' | 'action_type' | 'currency'>, amountCents: number) {
  return {
    action_id: req.action_id,
    agent_id: req.agent_id,
    action_type: req.action_type,
    amount_cents: amountCents,
    currency: req.currency,
  };
}

/**
 * The automatic decision on a new request (docs/api-guide.md, Rules and spending limits), from the replica's copy
 * of the account's rules and limits: no database round trip when nothing covers the request with an amount, one
 * otherwise (the spend of the covering limits, or recording an approval under the account's lock).
 */
async function decide(deps: PolicyDeps, req: DecideRequest): Promise<PolicyDecision> {
  const policy = await deps.policyCache.get(req.account_id);
  if (
    policy.rules.length === 0 &&
    policy.limits.length === 0 &&
    policy.grants.length === 0 &&
    policy.policies.length === 0
  ) {
    return { outcome: 'pending', policy_version: policy.version, no_policy: true };
  }
  const decision = await decideFrom(deps, policy, req, false);
  if (decision !== STALE && decision.outcome === 'pending') return routed(policy, req, decision, deps.now());
  // The version of exactly the rules and limits decided under. The common answer is built as it is:
  // spreading a verdict takes V8's slow object-clone path.
  if (decision === PENDING) return { outcome: 'pending', policy_version: policy.version };
  if (decision !== STALE) return { ...decision, policy_version: policy.version } as PolicyDecision;
  // The database refused an approval for a limit this replica's copy does not know yet (its event is still on its
  // way): decide again from a fresh copy.
  deps.policyCache.invalidate(req.account_id);
  const fresh = await deps.policyCache.get(req.account_id);
  const again = (await decideFrom(deps, fresh, req, true)) as Verdict;
  if (again.outcome === 'pending') return routed(fresh, req, again, deps.now());
  return { ...again, policy_version: fresh.version } as PolicyDecision;
}

/**
 * A request left to people, with who it goes to when a matching rule says so. Only an account with a rule that
 * routes pays the second pass over its rules (policy.routing lists those rules).
 */
function routed(
  policy: CachedPolicy,
  req: DecideRequest,
  verdict: Extract<Verdict, { outcome: 'pending' }>,
  now: Date,
): PolicyDecision {
  const routing = policy.routing.length ? routingOf(policy.routing, req, momentOf(now, policy.timezone)) : undefined;
  if (verdict === PENDING && !routing) return { outcome: 'pending', policy_version: policy.version };
  return { ...verdict, ...(routing ? { routing } : {}), policy_version: policy.version };
}

/** What decideFrom answers when the database refused an approval for a limit the cached copy lacks. */
const STALE = Symbol('stale policy');

async function decideFrom(
  deps: PolicyDeps,
  policy: CachedPolicy,
  req: DecideRequest,
  fresh: boolean,
): Promise<Verdict | typeof STALE> {
  const amount = req.amount_cents;
  const now = deps.now();
  // The rules in order, then the Cedar policies; limits still come first, and grants after both.
  const rule = deciderOf(policy, req, now);
  const covering = amount === null ? [] : policy.limits.filter((l) => limitApplies(l, req));
  if (amount !== null && req.currency !== 'USD' && covering.length > 0) {
    // Limits are in USD and there is no exchange rate to check this amount against them: a person decides.
    // Denying is always within a limit, so an auto_deny rule still applies.
    return rule && rule.decision !== 'auto_approve' ? byRule(rule, false) : PENDING;
  }
  if (rule?.decision === 'auto_approve' && amount !== null) {
    // Approving adds spend (recorded even where no limit covers it yet: a limit created later this period must see
    // it). Checked against the limits the database holds and recorded under the account's lock, as one step that no
    // other request of the account, on any replica, can interleave with.
    const locked = await deps.spend.record(
      req.account_id,
      { ...spendOf(req, amount), approved_by: 'rule', approved_at: now },
      periodWindows(now),
      true,
    );
    if (locked.recorded) {
      deps.spendChanged(req.account_id);
      return byRule(rule, true);
    }
    const denial = limitDenial(amount, covering, locked.spent);
    if (denial) return denial;
    // Refused by no limit even of a fresh copy: this action's spend was recorded already (a repeated decision).
    return fresh ? byRule(rule, false) : STALE;
  }
  if (amount === null || covering.length === 0)
    return rule ? byRule(rule, false) : byGrant(deps, policy, req, covering);
  // Limits come before rules: a request past a limit is denied even when no rule would approve it. Spend only
  // grows (a release takes back an approval that never happened), so a denial read without the lock stands.
  // Read from the replica's copy of the totals: a denial read a moment late stands just the same (spend only grows);
  // a total read before another replica's approval arrived leaves the request to a person, as a read racing that
  // approval always could.
  const windows = periodWindows(now);
  const scopes = covering.map((l) => scopeOf(l, windows));
  // The kept totals are read without an await: a busy account's decisions mostly find them.
  const spent =
    deps.spendCache.kept(req.account_id, scopes) ??
    (await deps.spendCache.totals(req.account_id, scopes, (missing) => deps.spend.spentIn(req.account_id, missing)));
  const denial = limitDenial(amount, covering, spent);
  if (denial) return denial;
  return rule ? byRule(rule, false) : byGrant(deps, policy, req, covering);
}

/**
 * A standing grant's approval, once no limit denied the request and no rule matched it: the first
 * covering grant with budget and uses left approves it, its use and spend counted under the account's lock against
 * the database (never the copy), together with the limits'. No round trip when the account has no live grant that
 * covers the request.
 */
async function byGrant(
  deps: PolicyDeps,
  policy: CachedPolicy,
  req: DecideRequest,
  covering: CachedPolicy['limits'],
): Promise<Verdict> {
  if (policy.grants.length === 0) return PENDING;
  const now = deps.now();
  const candidates = coveringGrants(policy.grants, req, now);
  if (candidates.length === 0) return PENDING;
  const used = await deps.spend.useGrant(
    req.account_id,
    candidates.map((g) => g.id),
    { ...spendOf(req, req.amount_cents as number), approved_by: 'grant', approved_at: now },
    periodWindows(now),
  );
  if (used.grant_id) {
    deps.spendChanged(req.account_id);
    return { outcome: 'approved', resolved_by: `grant:${used.grant_id}`, rule_applied: null, spend_recorded: true };
  }
  if (req.amount_cents !== null && used.spent.size > 0) {
    // A limit refused the grant's approval under the lock: limits come before grants.
    const denial = limitDenial(req.amount_cents, covering, used.spent);
    if (denial) return denial;
  }
  // The copy listed grants that are used up (or revoked meanwhile): the next decision reads them again.
  deps.policyCache.invalidate(req.account_id);
  return PENDING;
}

/** Deciding on new requests, counting approvals by a person, and the spending summary. */
export function createDecisions(deps: PolicyDeps) {
  return {
    async decide(req: DecideRequest, ctx: RequestContext): Promise<PolicyDecision> {
      const decision = await decide(deps, req);
      ctx.log.debug({ action_id: req.action_id, outcome: decision.outcome }, 'policy decision');
      return decision;
    },

    async recordSpend(req: RecordSpendRequest, ctx: RequestContext) {
      // Under the account's lock, so that a decision in flight never reads the spend from before this approval
      // and then adds its own on top. The approval itself is not refused here: see docs/decisions.md "Policy".
      const now = deps.now();
      const spend = { ...spendOf(req, req.amount_cents), approved_by: 'person' as const, approved_at: now };
      const { recorded } = await deps.spend.record(req.account_id, spend, periodWindows(now), false);
      if (recorded) deps.spendChanged(req.account_id);
      ctx.log.debug({ action_id: req.action_id, recorded }, 'spend recorded');
      return { recorded };
    },

    async releaseSpend({ account_id, action_id }: ReleaseSpendRequest, ctx: RequestContext) {
      const released = await deps.spend.release(account_id, action_id);
      if (released) deps.spendChanged(account_id);
      if (released) ctx.log.info({ action_id }, 'spend released');
      return { released };
    },

    async spendingSummary(agent: AgentPrincipal) {
      const windows = periodWindows(deps.now());
      const all = await deps.limits.list(agent.account_id);
      const limits = all.filter((l) => l.agent_id === null || l.agent_id === agent.agent_id);
      const spent = await deps.spend.spentIn(
        agent.account_id,
        limits.map((l) => scopeOf(l, windows)),
      );
      return {
        agent_id: agent.agent_id,
        summaries: limits.map((l) => {
          const window = windows[l.period];
          return {
            limit_id: l.id,
            period: l.period,
            ...summarize(l.amount_limit_cents, spent.get(l.id) ?? 0),
            agent_id: l.agent_id,
            action_type: l.action_type,
            period_start: window.start.toISOString(),
            period_end: window.end.toISOString(),
          };
        }),
      };
    },
  };
}
