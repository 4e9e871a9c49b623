import type { Bus } from '@agent-auth/bus';
import {
  type AgentPrincipal,
  actionsEndpoints as ep,
  type CreateOutcome,
  type NewAction,
  newId,
} from '@agent-auth/contracts';
import { isAppError } from '@agent-auth/errors';
import type { z } from 'zod';

/**
 * Sends a create, and once more when the bus found no responder or timed out: the same key (or, without one, the
 * same action id) makes the retry find the request the first replica may have stored (or take it over), so a
 * replica crash never doubles it.
 */
async function createOnce(
  bus: Bus,
  payload: z.output<typeof ep.create.request>,
  requestId: string,
): Promise<CreateOutcome> {
  try {
    return await bus.request(ep.create, payload, { requestId });
  } catch (err) {
    if (!isAppError(err) || (err.status !== 503 && err.status !== 504)) throw err;
    return bus.request(ep.create, payload, { requestId });
  }
}

/**
 * The gateway's side of POST /actions: asks the actions service to create the request, safe to retry. The answer
 * is the request, or an earlier answer (maybe an error) to the client's same Idempotency-Key, `replayed` then.
 */
export async function createAction(
  bus: Bus,
  input: { agent: AgentPrincipal; action: NewAction; idempotencyKey: string | undefined; requestId: string },
): Promise<CreateOutcome> {
  const { agent, action, idempotencyKey } = input;
  const outcome = await createOnce(
    bus,
    // Without the client's key, an id chosen here makes the gateway's own retry safe: the request is stored
    // under that id once (a second insert of it fails), at no cost beyond the create's one statement.
    idempotencyKey === undefined
      ? { agent, action, action_id: newId('action') }
      : { agent, action, idempotency_key: idempotencyKey },
    input.requestId,
  );
  // Only a repeat by the client is a replay to it; a retry of the gateway's own is invisible.
  if (idempotencyKey === undefined && 'action' in outcome) return { action: outcome.action, replayed: false };
  return outcome;
}
