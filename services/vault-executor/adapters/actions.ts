import type { Bus, RequestContext } from '@agent-auth/bus';
import {
  type AgentPrincipal,
  actionsEndpoints,
  type ClaimedExecution,
  type ExecutionRecord,
} from '@agent-auth/contracts';
import { toAppError } from '@agent-auth/errors';

/** The actions service as the vault executor uses it: it alone decides whether a request may run, and audits it. */
export interface ExecutionLedger {
  /** Marks the approved request as executing (once) and hands over the approved call; refusals are thrown. */
  claim(agent: AgentPrincipal, requestId: string, ctx: RequestContext): Promise<ClaimedExecution>;
  /** Appends an attempt to the request's audit trail; a lost write is logged, never the cause of a failure. */
  record(entry: ExecutionRecord, ctx: RequestContext): Promise<void>;
  /** Gives the claim back after a refusal before any connection; if that fails, the approval stays used (logged). */
  release(agent: AgentPrincipal, requestId: string, ctx: RequestContext): Promise<void>;
}

/** The ExecutionLedger over the bus. */
export function actionsOverBus(bus: Bus): ExecutionLedger {
  return {
    claim: (agent, requestId, ctx) =>
      bus.request(actionsEndpoints.claimExecution, { agent, request_id: requestId }, { requestId: ctx.requestId }),
    async record(entry, ctx) {
      try {
        await bus.request(actionsEndpoints.recordExecution, entry, { requestId: ctx.requestId });
      } catch (err) {
        ctx.log.error(
          { action_id: entry.request_id, err: toAppError(err).detail },
          'could not audit a vault execution',
        );
      }
    },
    async release(agent, requestId, ctx) {
      try {
        await bus.request(
          actionsEndpoints.releaseExecution,
          { agent, request_id: requestId },
          { requestId: ctx.requestId },
        );
      } catch (err) {
        ctx.log.error(
          { action_id: requestId, err: toAppError(err).detail },
          'could not release a refused vault execution',
        );
      }
    },
  };
}
