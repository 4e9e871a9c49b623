import { type BoundHandler, handle } from '@agent-auth/bus';
import { vaultEndpoints as ep } from '@agent-auth/contracts';
import type { createExecution } from '../use-cases/execute.js';

/** The agent's vault execution, on the bus. */
export function executeHandlers(execute: ReturnType<typeof createExecution>): BoundHandler[] {
  return [handle(ep.execute, ({ agent, request_id }, ctx) => execute(agent, request_id, ctx))];
}
