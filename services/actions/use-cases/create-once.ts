import { hash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RequestContext } from '@agent-auth/bus';
import { type ActionView, type AgentPrincipal, type CreateOutcome, newId } from '@agent-auth/contracts';
import { errors, isAppError } from '@agent-auth/errors';
import { toActionView } from '../domain/views.js';
import { type CreateInput, type createActionCreation, isUniqueViolation } from './create-action.js';
import type { ActionsDeps } from './deps.js';
import type { MetadataSeal } from './metadata.js';

type Deps = Pick<ActionsDeps, 'settings' | 'keyring' | 'requests' | 'idempotency'> & {
  metadata: MetadataSeal;
  create: ReturnType<typeof createActionCreation>;
};

/** The create message (actions.v2.create): the agent, its action, and the client's key or the id the gateway chose. */
export interface CreateRequest extends CreateInput {
  idempotency_key?: string;
}

/** How often a key's release that failed (the database away) is tried again, until its lease would lapse anyway. */
const RELEASE_RETRY_MS = 250;

/** A create under an id its caller fixed. */
type CreateUnderId = CreateInput & { action_id: string };

const hasActionId = (input: CreateInput): input is CreateUnderId => input.action_id !== undefined;

/**
 * POST /actions with an Idempotency-Key: the first caller of a key creates the request; a repeat
 * (a client's retry, or the bus's resend racing on another replica) waits for that answer and gets it again;
 * the same key with another request is 422. Without a key, every call creates (the bus's resend of one call
 * repeats the action id the gateway chose, and stores nothing twice). A holder is presumed gone once its lease
 * lapses or, at once, when its database backend is gone (store/idempotency.ts).
 */
export function createIdempotentCreation(deps: Deps) {
  const { idempotency, keyring, settings } = deps;
  // A holder is presumed gone after half the bus time-out, or as soon as its database backend is gone (its key is then
  // taken over, same action id); a repeat waits for an answer until just before its caller's own time-out.
  const leaseMs = Math.max(1000, Math.floor(settings.BUS_TIMEOUT_MS / 2));
  const waitMs = Math.max(1000, settings.BUS_TIMEOUT_MS - 1500);

  // The kept answer holds the request's metadata: encrypted, bound to the agent and key.
  const answerContext = (agent: AgentPrincipal, key: string) => `idempotency:${agent.agent_id}:${key}`;
  const keepAnswer = (agent: AgentPrincipal, key: string, status: number, body: unknown) =>
    idempotency.answer(agent.agent_id, key, status, keyring.encrypt(JSON.stringify(body), answerContext(agent, key)));
  /**
   * Lets the next repeat of a key take it over at once. The failure that calls for it is often the database's own
   * (a restart, a lost connection), which the release then meets too: it is tried again a few times in the
   * background, so a repeat does not wait for the lease once the database is back with this holder still connected.
   */
  const releaseSoon = async (agent: AgentPrincipal, key: string): Promise<void> => {
    const released = () =>
      idempotency.release(agent.agent_id, key).then(
        () => true,
        () => false,
      );
    if (await released()) return;
    let left = Math.ceil(leaseMs / RELEASE_RETRY_MS);
    const again = async () => {
      if (!(await released()) && --left > 0) setTimeout(again, RELEASE_RETRY_MS).unref();
    };
    setTimeout(again, RELEASE_RETRY_MS).unref();
  };

  const replayAnswer = (agent: AgentPrincipal, key: string, status: number, responseEnc: string): CreateOutcome => {
    const body = JSON.parse(keyring.decrypt(responseEnc, answerContext(agent, key))) as Record<string, unknown>;
    if (status === 200) return { replayed: true, action: body as ActionView };
    return { replayed: true, error: { status, code: String(body.code), detail: String(body.detail) } };
  };

  /**
   * Creates the request of a key this replica holds (under the id the key claimed) and keeps the answer under the
   * key; null when another replica stored that request first (its kept answer is replayed next).
   */
  const createAsKeyHolder = async (
    input: CreateUnderId,
    key: string,
    ctx: RequestContext,
  ): Promise<CreateOutcome | null> => {
    const { agent } = input;
    // A holder that stopped after storing the request but before keeping its answer: the request is the answer.
    const stored = await deps.requests.findForAgent(input.action_id, agent.agent_id);
    if (stored) {
      const view = toActionView(stored, deps.metadata.open(stored));
      await keepAnswer(agent, key, 200, view);
      return { replayed: false, action: view };
    }
    try {
      const view = await deps.create(input, ctx);
      await keepAnswer(agent, key, 200, view);
      return { replayed: false, action: view };
    } catch (err) {
      if (isUniqueViolation(err)) return null;
      if (isAppError(err) && err.status < 500) {
        await keepAnswer(agent, key, err.status, err.toBody());
        throw err;
      }
      // Nothing worth keeping (a service or the database failed): the next repeat of the key starts over at once.
      await releaseSoon(agent, key);
      throw err;
    }
  };

  /**
   * A create under the id the gateway chose: a resend of the same create inserts the same id, which fails as a whole
   * (quota count included) when a first attempt stored it; the stored request is then the answer.
   */
  const createUnderGatewayId = async (input: CreateUnderId, ctx: RequestContext): Promise<CreateOutcome> => {
    try {
      return { replayed: false, action: await deps.create(input, ctx) };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const stored = await deps.requests.findForAgent(input.action_id, input.agent.agent_id);
      if (!stored) throw err;
      return { replayed: true, action: toActionView(stored, deps.metadata.open(stored)) };
    }
  };

  /**
   * Takes a key's claim: the first claim of a key creates, a repeat waits for that create's kept answer and replays
   * it; the same key with another body is 422.
   */
  const createOnceUnderKey = async (
    { agent, action }: CreateRequest,
    key: string,
    ctx: RequestContext,
  ): Promise<CreateOutcome> => {
    const bodyHash = hash('sha256', JSON.stringify(action), 'hex');
    const giveUpAt = Date.now() + waitMs;
    let takenOver = false;
    for (;;) {
      const claim = await idempotency.claim({
        agentId: agent.agent_id,
        key,
        bodyHash,
        actionId: newId('action'),
        leaseMs,
      });
      if (claim.kind === 'other_body') throw errors.idempotencyKeyReused();
      if (claim.kind === 'answered') return replayAnswer(agent, key, claim.status, claim.responseEnc);
      if (claim.kind === 'owner') {
        const outcome = await createAsKeyHolder({ agent, action, action_id: claim.actionId }, key, ctx);
        if (outcome) return outcome;
      } else if (ctx.resent && !takenOver) {
        // Sent again by the requester because the replica holding the key died or went silent: the key is taken over
        // now, not when that holder's lease lapses (the claim's one action id still stores the request once).
        takenOver = true;
        await idempotency.release(agent.agent_id, key);
        continue;
      } else if (Date.now() > giveUpAt) {
        throw errors.idempotencyKeyInProgress();
      }
      await sleep(100);
    }
  };

  /** A create without a key or a chosen id: every call creates. */
  const createEach = async (input: CreateInput, ctx: RequestContext): Promise<CreateOutcome> => ({
    replayed: false,
    action: await deps.create(input, ctx),
  });

  /** The create message's one entry: once per Idempotency-Key, once per gateway-chosen id, or a plain create. */
  return function createAction(request: CreateRequest, ctx: RequestContext): Promise<CreateOutcome> {
    if (request.idempotency_key !== undefined) return createOnceUnderKey(request, request.idempotency_key, ctx);
    if (hasActionId(request)) return createUnderGatewayId(request, ctx);
    return createEach(request, ctx);
  };
}
