import type { RequestContext } from '@agent-auth/bus';
import {
  type AgentPrincipal,
  type ClaimedExecution,
  type ExecutionClaim,
  type ExecutionRecord,
  VaultExecutionMetadata,
} from '@agent-auth/contracts';
import { type AppError, errors } from '@agent-auth/errors';
import type { RequestRow } from '../domain/rows.js';
import type { ActionsDeps } from './deps.js';
import type { Expiry } from './expiry.js';
import type { MetadataSeal } from './metadata.js';

const auditEvents: Record<ExecutionRecord['outcome'], string> = {
  succeeded: 'executed',
  refused: 'execution_refused',
  failed: 'execution_failed',
};

type Outcome = Awaited<ReturnType<ActionsDeps['requests']['executionOutcome']>>;

/**
 * What is known of an execution that already ran, for its 409: a retry after a lost answer (an executor stopped,
 * a connection cut) learns whether the upstream answered, and with what status, without the call being made again.
 */
function executionOutcomeText(row: RequestRow, outcome: Outcome): string {
  const started = row.execution_started_at ? new Date(row.execution_started_at).toISOString() : 'earlier';
  if (!outcome) return `started at ${started}; no outcome recorded (the call may have reached the upstream)`;
  const status = outcome.detail.status_code;
  if (outcome.event === 'executed') return `started at ${started}; the upstream answered ${status}`;
  return `started at ${started}; the call failed (${outcome.detail.error_status ?? 502})`;
}

/** Why an agent's request cannot be claimed for execution now: the error the agent gets. */
function whyNotExecutable(row: RequestRow, outcome: Outcome): AppError {
  if (!row.content_hash) return errors.notVaultRequest(row.id);
  if (row.execution_started_at) return errors.alreadyExecuted(row.id, executionOutcomeText(row, outcome));
  return errors.actionNotApproved(row.status);
}

type Deps = Pick<ActionsDeps, 'requests'> & { expiry: Expiry; metadata: MetadataSeal };

/**
 * How long after its start an execution's outcome may still be on its way: the executor sends the record right
 * after answering the agent, so a retry of that answer can arrive first; it waits this long for the record.
 */
const OUTCOME_ON_ITS_WAY_MS = 2_000;
const OUTCOME_POLL_MS = 20;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The actions side of a vault execution: claim an approved request once, and audit every attempt. */
export function createExecution(deps: Deps) {
  const { requests, expiry, metadata } = deps;

  /** The outcome of a started execution, waiting for it while it may still be being recorded. */
  const outcomeOf = async (row: RequestRow): Promise<Outcome> => {
    // The start is the database's clock; the wait is bounded by this process's own too, whatever their skew.
    const startedAt = new Date(row.execution_started_at!).getTime();
    const deadline = Math.min(startedAt, Date.now()) + OUTCOME_ON_ITS_WAY_MS;
    for (;;) {
      const outcome = await requests.executionOutcome(row.id);
      if (outcome || Date.now() > deadline) return outcome;
      await pause(OUTCOME_POLL_MS);
    }
  };

  /** Explains a failed claim, and writes the refused attempt into the request's audit trail (own requests only). */
  const refuseClaim = async (agent: AgentPrincipal, id: string, ctx: RequestContext): Promise<never> => {
    const found = await requests.findForAgent(id, agent.agent_id);
    if (!found) throw errors.actionNotFound(id);
    const row = await expiry.current(found);
    const outcome = row.content_hash && row.execution_started_at ? await outcomeOf(row) : undefined;
    const refusal = whyNotExecutable(row, outcome);
    await requests.appendAudit(id, row.account_id, {
      event: 'execution_refused',
      actor: `agent:${agent.agent_id}`,
      detail: { status: refusal.status, reason: refusal.detail },
    });
    ctx.log.info({ action_id: id, status: refusal.status }, 'vault execution refused');
    throw refusal;
  };

  return {
    async claim({ agent, request_id: id, claim_id }: ExecutionClaim, ctx: RequestContext): Promise<ClaimedExecution> {
      const audit = { event: 'execution_started', actor: `agent:${agent.agent_id}` };
      const claimed = await requests.claimExecution(id, agent.agent_id, claim_id, audit);
      if (!claimed) return refuseClaim(agent, id, ctx);
      const call = VaultExecutionMetadata.safeParse(metadata.open(claimed));
      if (!call.success || !claimed.content_hash) throw errors.storedMetadataInvalid();
      return {
        request_id: claimed.id,
        account_id: claimed.account_id,
        agent_id: claimed.agent_id,
        content_hash: claimed.content_hash,
        metadata: call.data,
      };
    },

    /** Gives a claim back whose call was refused before the upstream was contacted. */
    async release({ agent, request_id: id, claim_id }: ExecutionClaim, ctx: RequestContext) {
      const released = await requests.releaseExecution(id, agent.agent_id, claim_id, {
        event: 'execution_released',
        actor: `agent:${agent.agent_id}`,
        detail: { reason: 'refused before the upstream was contacted' },
      });
      ctx.log.info({ action_id: id, released }, 'vault execution claim released');
      return { released };
    },

    async record(record: ExecutionRecord): Promise<{ recorded: true }> {
      const { agent, request_id, outcome, target_host, status_code, error_status, detail, latency_ms } = record;
      // The claim (committed, flushed) is what makes the call run at most once and puts it in the trail before it
      // is made; the outcome is only a report of what happened, so its commit does not wait for the WAL flush.
      const recorded = await requests.appendAuditForAgent(
        request_id,
        agent.agent_id,
        {
          event: auditEvents[outcome],
          actor: `agent:${agent.agent_id}`,
          detail: { target_host, status_code, error_status, detail, latency_ms },
        },
        { flush: false },
      );
      if (!recorded) throw errors.actionNotFound(request_id);
      return { recorded: true };
    },
  };
}
