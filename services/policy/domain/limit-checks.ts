/** The parts of a spending limit that decide which spend it covers; null means "any". */
export interface LimitScope {
  agent_id: string | null;
  action_type: string | null;
}

/** Whether a limit covers an action of this agent and type. */
export function limitApplies(limit: LimitScope, action: { agent_id: string; action_type: string }): boolean {
  return (
    (limit.agent_id === null || limit.agent_id === action.agent_id) &&
    (limit.action_type === null || limit.action_type === action.action_type)
  );
}

/** A limit with what has been spent against it in its current window, all in cents. */
export interface LimitStanding<L> {
  limit: L;
  limit_cents: number;
  spent_cents: number;
}

/**
 * The first limit (in the order given) that `amount_cents` more would take past its figure; reaching the
 * figure exactly is allowed.
 */
export function firstExceededLimit<L>(
  standings: readonly LimitStanding<L>[],
  amountCents: number,
): LimitStanding<L> | undefined {
  return standings.find((s) => s.spent_cents + amountCents > s.limit_cents);
}

/** The summary figures of one limit in dollars: what is left (never below zero) and the fraction spent. */
export function summarize(limitCents: number, spentCents: number) {
  return {
    limit: limitCents / 100,
    spent: spentCents / 100,
    remaining: Math.max(0, limitCents - spentCents) / 100,
    utilization: spentCents / limitCents,
  };
}
