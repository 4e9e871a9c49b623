import type { Bus } from '@agent-auth/bus';
import {
  type AgentPrincipal,
  actionsEndpoints as ep,
  type CreateOutcome,
  type NewAction,
  newId,
} from '@agent-auth/contracts';

/**
 * The gateway's side of POST /actions: asks the actions service to create the request, safe to retry. The answer
 * is the request, or an earlier answer (maybe an error) to the client's same Idempotency-Key, `replayed` then.
 * The bus sends the create again by itself to another replica when the one that took it dies or goes silent; the
 * same key (or, without one, the same action id chosen here) makes that resend find the request the first replica
 * may have stored (or take it over), so a replica crash never doubles it. A 503 or 504 that still comes (no replica
 * for seconds, a database away, the whole deadline spent) goes to the client with Retry-After: sending it once more
 * here would only double that wait.
 */
export async function createAction(
  bus: Bus,
  input: { agent: AgentPrincipal; action: NewAction; idempotencyKey: string | undefined; requestId: string },
): Promise<CreateOutcome> {
  const { agent, action, idempotencyKey } = input;
  const outcome = await bus.request(
    ep.create,
    // Without the client's key, an id chosen here makes the bus's resend safe: the request is stored under that id
    // once (a second insert of it fails), at no cost beyond the create's one statement.
    idempotencyKey === undefined
      ? { agent, action, action_id: newId('action') }
      : { agent, action, idempotency_key: idempotencyKey },
    { requestId: input.requestId },
  );
  // Only a repeat by the client is a replay to it; a resend of the bus's own is invisible.
  if (idempotencyKey === undefined && 'action' in outcome) return { action: outcome.action, replayed: false };
  return outcome;
}
