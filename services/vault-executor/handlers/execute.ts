import { type BoundHandler, handleOnce } from '@agent-auth/bus';
import { vaultEndpoints as ep } from '@agent-auth/contracts';
import type { createExecution } from '../use-cases/execute.js';

/**
 * The agent's vault execution, on the bus. Kept per call, sealed (the upstream's answer): a resend gets the upstream's
 * status and body as the first send got them, not 409 already_executed, and the call is still made once.
 */
export function executeHandlers(execute: ReturnType<typeof createExecution>): BoundHandler[] {
  return [handleOnce(ep.execute, ({ agent, request_id }, ctx) => execute(agent, request_id, ctx))];
}
