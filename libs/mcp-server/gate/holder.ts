// Asking the holder about one held call: create the request, wait for the answer (telling the caller it waits), and
// withdraw the request when the caller gives up on the call or the gate stops waiting.
import {
  ConflictError,
  FINAL_STATUSES,
  WaitTimeoutError,
  type Action,
  type ActionRequestInput,
  type AgentAuthClient,
} from '@agent-auth/client';

// MCP clients reset their time-out on progress; the gate promises a notification at least every 5 s.
export const PROGRESS_EVERY_MS = 4000;

export interface AskHolderInput {
  client: AgentAuthClient;
  request: ActionRequestInput;
  /** How long to wait for the answer, in seconds; the request is withdrawn after it. */
  timeoutSeconds: number;
  /** Aborted when the caller cancels the call: the request is withdrawn and the promise rejects. */
  signal: AbortSignal;
  /** Called with the created request, before waiting. */
  onCreated?: (action: Action) => void;
  /** Called at the start of the wait and every PROGRESS_EVERY_MS with the seconds waited so far. */
  onProgress?: (secondsWaited: number, action: Action) => void;
  log: (line: string) => void;
}

/** Withdraws a request nobody waits for any longer; a request that already left pending is read instead. */
async function withdraw(client: AgentAuthClient, id: string, log: (line: string) => void): Promise<Action | null> {
  try {
    return await client.cancelAction(id);
  } catch (err) {
    if (err instanceof ConflictError) return client.getStatus(id).catch(() => null);
    log(`could not withdraw request ${id}: ${String(err)}`);
    return null;
  }
}

/** Calls `tell` now and every PROGRESS_EVERY_MS until the returned function is called. */
function ticking(tell: () => void): () => void {
  tell();
  const timer = setInterval(tell, PROGRESS_EVERY_MS);
  return () => clearInterval(timer);
}

/** The request once it left pending; `timedOut` when the gate withdrew it because nobody answered in time. */
export interface HolderAnswer {
  action: Action;
  timedOut: boolean;
}

/**
 * Creates the request and resolves once it left pending: approved, denied, expired or cancelled (a request still
 * pending when the time is up is withdrawn, and resolves as the service then has it: cancelled, or approved or
 * denied at the last moment). Rejects with the signal's reason when the caller cancels, after withdrawing the
 * request; rejects with the client's error when the service cannot be asked.
 */
export async function askHolder(input: AskHolderInput): Promise<HolderAnswer> {
  const { client, signal, log } = input;
  // Not aborted by the signal: a create cut off midway could leave a request the gate never learns the id of.
  const created = await client.requestAction(input.request);
  input.onCreated?.(created);
  if (signal.aborted) {
    await withdraw(client, created.id, log);
    throw signal.reason;
  }
  if (FINAL_STATUSES.includes(created.status)) return { action: created, timedOut: false };
  const started = Date.now();
  const stop = input.onProgress
    ? ticking(() => input.onProgress!(Math.floor((Date.now() - started) / 1000), created))
    : () => {};
  try {
    const action = await client.waitForResult(created.id, { timeoutMs: input.timeoutSeconds * 1000, signal });
    return { action, timedOut: false };
  } catch (err) {
    if (signal.aborted) {
      await withdraw(client, created.id, log);
      throw signal.reason;
    }
    if (!(err instanceof WaitTimeoutError)) throw err;
    const after = await withdraw(client, created.id, log);
    // Answered at the last moment: that answer stands. Otherwise (withdrawn, or an older service that cannot
    // withdraw) nobody answered in time.
    if (after && (after.status === 'approved' || after.status === 'denied')) return { action: after, timedOut: false };
    return { action: after ?? err.action, timedOut: true };
  } finally {
    stop();
  }
}
