import { actionsEndpoints as ep, VaultExecutionMetadata, type AgentPrincipal, type ExecutionRecord } from '@agent-auth/contracts';
import { AppError, errors } from '@agent-auth/errors';
import { handle, type BoundHandler, type RequestContext } from '@agent-auth/bus';
import type { RequestRow } from '../store/rows.js';
import type { ActionsDeps } from './deps.js';
import { metadataOf, withLazyExpiry } from './actions.js';

const auditEvents: Record<ExecutionRecord['outcome'], string> = {
  succeeded: 'executed',
  refused: 'execution_refused',
  failed: 'execution_failed',
};

/** Why an agent's request cannot be claimed for execution now: the error the agent gets. */
function whyNotExecutable(row: RequestRow): AppError {
  if (!row.content_hash) return errors.badRequest(`Action request '${row.id}' is not a vault execution request`);
  if (row.execution_started_at) return errors.conflict(`Action request '${row.id}' has already been executed`);
  return errors.forbidden(`Action request is '${row.status}', not approved`);
}

/** Explains a failed claim, and writes the refused attempt into the request's audit trail (own requests only). */
async function refuseClaim(deps: ActionsDeps, agent: AgentPrincipal, id: string, ctx: RequestContext): Promise<never> {
  const found = await deps.requests.findForAgent(id, agent.agent_id);
  if (!found) throw errors.notFound(`Action request '${id}' not found`);
  const row = await withLazyExpiry(deps, found);
  const refusal = whyNotExecutable(row);
  await deps.requests.appendAudit(id, row.account_id, {
    event: 'execution_refused', actor: `agent:${agent.agent_id}`, detail: { status: refusal.status, reason: refusal.detail },
  });
  ctx.log.info({ action_id: id, status: refusal.status }, 'vault execution refused');
  throw refusal;
}

/** The actions side of a vault execution: claim an approved request once, and audit every attempt. */
export function executionHandlers(deps: ActionsDeps): BoundHandler[] {
  return [
    handle(ep.claimExecution, async ({ agent, request_id }, ctx) => {
      const claimed = await deps.requests.claimExecution(request_id, agent.agent_id, {
        event: 'execution_started', actor: `agent:${agent.agent_id}`,
      });
      if (!claimed) return refuseClaim(deps, agent, request_id, ctx);
      const metadata = VaultExecutionMetadata.safeParse(metadataOf(deps, claimed));
      if (!metadata.success) throw errors.internal('Stored vault metadata is not valid');
      return {
        request_id: claimed.id, account_id: claimed.account_id, agent_id: claimed.agent_id,
        content_hash: claimed.content_hash!, metadata: metadata.data,
      };
    }),

    handle(ep.recordExecution, async (record) => {
      const recorded = await deps.requests.appendAuditForAgent(record.request_id, record.agent.agent_id, {
        event: auditEvents[record.outcome], actor: `agent:${record.agent.agent_id}`,
        detail: {
          target_host: record.target_host, status_code: record.status_code, error_status: record.error_status,
          detail: record.detail, latency_ms: record.latency_ms,
        },
      });
      if (!recorded) throw errors.notFound(`Action request '${record.request_id}' not found`);
      return { recorded: true as const };
    }),
  ];
}
