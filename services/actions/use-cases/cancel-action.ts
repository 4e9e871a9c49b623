import type { RequestContext } from '@agent-auth/bus';
import type { ActionView, CancelRequest } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { recordDecision } from '@agent-auth/metrics';
import { receiptDetail } from '../domain/new-action.js';
import { toActionView } from '../domain/views.js';
import type { RequestRow } from '../domain/rows.js';
import type { ActionsDeps } from './deps.js';
import type { Expiry } from './expiry.js';
import type { MetadataSeal } from './metadata.js';

type Deps = Pick<ActionsDeps, 'requests' | 'receipts'> & { expiry: Expiry; metadata: MetadataSeal };

/**
 * An agent withdraws its own pending request: it leaves pending as `cancelled`, resolved by `agent`, with a
 * receipt, an audit entry and a resolution event like any other outcome. Cancelling a request already cancelled
 * answers it again (a retried cancel is not an error); any other outcome is a 409.
 */
export function createCancellation(deps: Deps) {
  const { requests, receipts, expiry, metadata } = deps;
  const view = (row: RequestRow): ActionView => toActionView(row, metadata.open(row));

  const current = async (request: CancelRequest): Promise<RequestRow> => {
    const found = await requests.findForAgent(request.id, request.agent.agent_id);
    if (!found) throw errors.actionNotFound(request.id);
    return expiry.current(found);
  };

  return async function cancel(request: CancelRequest, ctx: RequestContext): Promise<ActionView> {
    const row = await current(request);
    if (row.status === 'cancelled') return view(row);
    if (row.status !== 'pending') throw errors.actionNotPending(row.status);
    const at = new Date();
    const receipt = await receipts.sign(row, { status: 'cancelled', resolved_by: 'agent', resolved_at: at });
    const audit = { event: 'cancelled', actor: `agent:${request.agent.agent_id}`, detail: receiptDetail(receipt) };
    const updated = await requests.cancel(row.id, request.agent.agent_id, { resolved_at: at, receipt }, audit);
    if (!updated) {
      // Resolved a moment ago by someone else (or cancelled by a retry of this call): say how it stands now.
      const now = await current(request);
      if (now.status === 'cancelled') return view(now);
      throw errors.actionNotPending(now.status);
    }
    ctx.log.info({ action_id: row.id }, 'action cancelled by its agent');
    recordDecision('cancelled', 'agent');
    return view(updated);
  };
}
export type Cancellation = ReturnType<typeof createCancellation>;
