import type { Bus, RequestContext } from '@agent-auth/bus';
import {
  actionsEndpoints,
  type ClaimedExecution,
  type ExecutionClaim,
  type ExecutionRecord,
} from '@agent-auth/contracts';
import { toAppError } from '@agent-auth/errors';

/** The actions service as the vault executor uses it: it alone decides whether a request may run, and audits it. */
export interface ExecutionLedger {
  /**
   * Marks the approved request as executing (once) by this claim and hands over the approved call; refusals are
   * thrown. A claim whose answer was lost is asked again, so one committed but unanswered is not lost with it.
   */
  claim(claim: ExecutionClaim, ctx: RequestContext): Promise<ClaimedExecution>;
  /** Appends an attempt to the request's audit trail; a lost write is logged, never the cause of a failure. */
  record(entry: ExecutionRecord, ctx: RequestContext): Promise<void>;
  /** Gives this claim back after a refusal before any connection; if that fails, the approval stays used (logged). */
  release(claim: ExecutionClaim, ctx: RequestContext): Promise<void>;
}

export interface LedgerTiming {
  /** How long a claim whose answer did not come is asked again (the bus back after a restart, a replica's). */
  claimRetryMs: number;
  /** The pause before the first repeat; each next one doubles, up to a second. */
  firstPauseMs: number;
}

const defaultTiming: LedgerTiming = { claimRetryMs: 6_000, firstPauseMs: 100 };

/** No answer (time-out, no responder, the bus down) or the database gone: the claim may or may not be stored. */
function isUnanswered(err: unknown): boolean {
  return toAppError(err).status >= 500;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends a request again while it goes unanswered, pausing longer each time (doubling up to a second), until the
 * deadline; an answer, a refusal, or the last unanswered error is what it settles with.
 */
async function untilAnswered<T>(send: () => Promise<T>, timing: LedgerTiming, onRepeat: (err: unknown) => void) {
  const deadline = Date.now() + timing.claimRetryMs;
  for (let wait = timing.firstPauseMs; ; wait = Math.min(wait * 2, 1000)) {
    try {
      return await send();
    } catch (err) {
      if (!isUnanswered(err) || Date.now() + wait > deadline) throw err;
      onRepeat(err);
      await pause(wait);
    }
  }
}

/** The ExecutionLedger over the bus. */
export function actionsOverBus(bus: Bus, timing: LedgerTiming = defaultTiming): ExecutionLedger {
  const release = async (claim: ExecutionClaim, ctx: RequestContext) => {
    const send = () => bus.request(actionsEndpoints.releaseExecution, claim, { requestId: ctx.requestId });
    try {
      await untilAnswered(send, timing, () => {});
    } catch (err) {
      const detail = toAppError(err).detail;
      ctx.log.error({ action_id: claim.request_id, err: detail }, 'could not release a vault execution claim');
    }
  };

  return {
    async claim(claim, ctx) {
      const send = () => bus.request(actionsEndpoints.claimExecution, claim, { requestId: ctx.requestId });
      try {
        return await untilAnswered(send, timing, (err) =>
          ctx.log.warn(
            { action_id: claim.request_id, err: toAppError(err).detail },
            'vault claim unanswered; asking again',
          ),
        );
      } catch (err) {
        // Stored or not, this attempt will not call the upstream: give the claim back if it was stored, so the
        // approval stays usable. In the background: the agent's answer does not wait for it.
        if (isUnanswered(err)) void release(claim, ctx);
        throw err;
      }
    },
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
    release,
  };
}
