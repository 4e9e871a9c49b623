import { type BoundHandler, handle } from '@agent-auth/bus';
import { ruleReplayEndpoints as ep } from '@agent-auth/contracts';
import type { UseCases } from '../use-cases/use-cases.js';

/** Replays of the account's history on the bus: a draft's (POST /rules/simulate) and the suggested rules'. */
export function ruleReplayHandlers(uc: UseCases): BoundHandler[] {
  return [
    handle(ep.simulate, (req, ctx) => uc.ruleReplay.simulate(req, ctx)),
    handle(ep.suggestions, ({ device }, ctx) => uc.ruleReplay.suggestions(device, ctx)),
  ];
}
