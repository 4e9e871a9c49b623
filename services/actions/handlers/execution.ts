import { type BoundHandler, handle } from '@agent-auth/bus';
import { actionsEndpoints as ep } from '@agent-auth/contracts';
import type { UseCases } from '../use-cases/use-cases.js';

/** The vault executor's side of an execution on the bus: claim an approved request once, record each attempt. */
export function executionHandlers(uc: UseCases): BoundHandler[] {
  return [
    handle(ep.claimExecution, (claim, ctx) => uc.execution.claim(claim, ctx)),
    handle(ep.recordExecution, (record) => uc.execution.record(record)),
    handle(ep.releaseExecution, (claim, ctx) => uc.execution.release(claim, ctx)),
  ];
}
