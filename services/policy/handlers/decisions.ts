import { fromCents, policyEndpoints as ep, type DecideRequest, type PolicyDecision } from '@agent-auth/contracts';
import { handle, type BoundHandler } from '@agent-auth/bus';
import type { DecisionLimit, DecisionRule } from '../store/account-policy.js';
import type { PeriodWindows, SpendScope } from '../store/spend.js';
import type { PolicyDeps } from './deps.js';
import { firstExceededLimit, limitApplies, summarize } from './limit-checks.js';
import { periodWindow } from './period-windows.js';
import { firstMatchingRule } from './rule-matching.js';

const PENDING: PolicyDecision = { outcome: 'pending' };

function byRule(rule: DecisionRule, spendRecorded: boolean): PolicyDecision {
  return {
    outcome: rule.decision === 'auto_approve' ? 'approved' : 'denied',
    resolved_by: `rule:${rule.name}`,
    rule_applied: rule.name,
    spend_recorded: spendRecorded,
  };
}

function scopeOf(limit: Omit<DecisionLimit, 'spent_cents'>, now: Date): SpendScope {
  return { id: limit.id, ...periodWindow(limit.period, now), agent_id: limit.agent_id, action_type: limit.action_type };
}

type Checkable = DecideRequest & { amount_cents: number };

function windowsAt(now: Date): PeriodWindows {
  return { daily: periodWindow('daily', now), weekly: periodWindow('weekly', now), monthly: periodWindow('monthly', now) };
}

/** The denial by the first covering limit that this request would take past its figure, if any. */
function limitDenial(req: Checkable, covering: DecisionLimit[], spent: (limit: DecisionLimit) => number): PolicyDecision | undefined {
  const over = firstExceededLimit(
    covering.map((limit) => ({ limit, limit_cents: limit.amount_limit_cents, spent_cents: spent(limit) })),
    req.amount_cents,
  );
  if (!over) return undefined;
  return {
    outcome: 'denied',
    resolved_by: `spending_limit:${over.limit.id}`,
    rule_applied: null,
    spending_limit_exceeded: { period: over.limit.period, limit: fromCents(over.limit_cents), spent: fromCents(over.spent_cents), requested: fromCents(req.amount_cents) },
    spend_recorded: false,
  };
}

function spendOf(req: Pick<DecideRequest, 'action_id' | 'agent_id' | 'action_type' | 'currency'> & { amount_cents: number }) {
  return { action_id: req.action_id, agent_id: req.agent_id, action_type: req.action_type, amount_cents: req.amount_cents, currency: req.currency };
}

/** The automatic decision on a new request (SPEC 3, DESIGN "Rules" and "Spending limits"). */
export async function decide(deps: PolicyDeps, req: DecideRequest): Promise<PolicyDecision> {
  const amount = req.amount_cents;
  const now = deps.now();
  // One round trip: rules, limits and, for a request with an amount, each limit's spend so far.
  const { rules, limits } = await deps.accountPolicy.forDecision(req.account_id, amount === null ? null : windowsAt(now));
  const rule = firstMatchingRule(rules, req);
  const covering = amount === null ? [] : limits.filter((l) => limitApplies(l, req));

  if (amount === null || covering.length === 0) {
    if (!rule) return PENDING;
    // Spend is recorded even where no limit covers it yet: a limit created later this period must see it.
    const recorded = rule.decision === 'auto_approve' && amount !== null
      && (await deps.spend.record(req.account_id, { ...spendOf({ ...req, amount_cents: amount }), approved_by: 'rule', approved_at: now }, windowsAt(now), false)).recorded;
    return byRule(rule, recorded);
  }
  if (req.currency !== 'USD') {
    // Limits are in USD and there is no exchange rate to check this amount against them: a person decides.
    // Denying is always within a limit, so an auto_deny rule still applies.
    return rule?.decision === 'auto_deny' ? byRule(rule, false) : PENDING;
  }
  const checkable: Checkable = { ...req, amount_cents: amount };
  // Limits come before rules (they override auto_approve). Spend only grows (a release takes back an approval
  // that never happened), so a denial read from the committed spend without the lock stands, and a burst past a
  // limit is refused without queueing on the lock.
  const denial = limitDenial(checkable, covering, (l) => l.spent_cents);
  if (denial) return denial;
  if (rule?.decision !== 'auto_approve') return rule ? byRule(rule, false) : PENDING;
  // Approving adds spend: check again and record under the account's lock, as one step that no other request
  // of the account, on any replica, can interleave with.
  const locked = await deps.spend.record(req.account_id, { ...spendOf(checkable), approved_by: 'rule', approved_at: now }, windowsAt(now), true);
  if (!locked.recorded) {
    const lockedDenial = limitDenial(checkable, covering, (l) => locked.spent.get(l.id) ?? 0);
    if (lockedDenial) return lockedDenial;
  }
  return byRule(rule, locked.recorded);
}

/** Deciding on new requests, counting approvals by a person, and the spending summary. */
export function decisionHandlers(deps: PolicyDeps): BoundHandler[] {
  return [
    handle(ep.decide, async (req, ctx) => {
      const decision = await decide(deps, req);
      ctx.log.debug({ action_id: req.action_id, outcome: decision.outcome }, 'policy decision');
      return decision;
    }),

    handle(ep.recordSpend, async (req, ctx) => {
      // Under the account's lock, so that a decision in flight never reads the spend from before this approval
      // and then adds its own on top. The approval itself is not refused here: see docs/decisions.md "Policy".
      const now = deps.now();
      const { recorded } = await deps.spend.record(req.account_id, { ...spendOf(req), approved_by: 'person', approved_at: now }, windowsAt(now), false);
      ctx.log.debug({ action_id: req.action_id, recorded }, 'spend recorded');
      return { recorded };
    }),

    handle(ep.releaseSpend, async ({ account_id, action_id }, ctx) => {
      const released = await deps.spend.release(account_id, action_id);
      if (released) ctx.log.info({ action_id }, 'spend released');
      return { released };
    }),

    handle(ep.spendingSummary, async ({ agent }) => {
      const now = deps.now();
      const limits = (await deps.limits.list(agent.account_id)).filter((l) => l.agent_id === null || l.agent_id === agent.agent_id);
      const spent = await deps.spend.spentIn(agent.account_id, limits.map((l) => scopeOf(l, now)));
      return {
        agent_id: agent.agent_id,
        summaries: limits.map((l) => {
          const window = periodWindow(l.period, now);
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
    }),
  ];
}
