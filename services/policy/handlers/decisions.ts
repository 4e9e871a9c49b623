import { type BoundHandler, handle } from '@agent-auth/bus';
import { policyEndpoints as ep } from '@agent-auth/contracts';
import type { createDecisions } from '../use-cases/decisions.js';

/** The actions service's questions on the bus: decide a new request, count or release spend; the agent's summary. */
export function decisionHandlers(decisions: ReturnType<typeof createDecisions>): BoundHandler[] {
  return [
    handle(ep.decide, (req, ctx) => decisions.decide(req, ctx)),
    handle(ep.recordSpend, (req, ctx) => decisions.recordSpend(req, ctx)),
    handle(ep.releaseSpend, (req, ctx) => decisions.releaseSpend(req, ctx)),
    handle(ep.spendingSummary, ({ agent }) => decisions.spendingSummary(agent)),
  ];
}
