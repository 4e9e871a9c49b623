import { type BoundHandler, handle } from '@agent-auth/bus';
import { actionsEndpoints as ep } from '@agent-auth/contracts';
import type { UseCases } from '../use-cases/use-cases.js';

/** The vault executor's side of an execution on the bus: claim an approved request once, record each attempt. */
export function executionHandlers(uc: UseCases): BoundHandler[] {
  return [
    handle(ep.claimExecution, ({ agent, request_id }, ctx) => uc.execution.claim(agent, request_id, ctx)),
    handle(ep.recordExecution, (record) => uc.execution.record(record)),
    handle(ep.releaseExecution, ({ agent, request_id }, ctx) => uc.execution.release(agent, request_id, ctx)),
  ];
}
