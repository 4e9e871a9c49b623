import type { ActionEventStream } from '@agent-auth/bus';
import type { ActionEvent, ActionView } from '@agent-auth/contracts';

/** Why a waiter stopped waiting: its request was resolved somewhere, its timer ran out, or it was let go. */
export type WakeReason = 'event' | 'timer' | 'released';

// Lazy expiry happens on read: reading just after expires_at is what turns the request expired.
const EXPIRY_MARGIN_MS = 20;
// A request still pending past its expiry (the database clock is behind ours) is read again after this long.
const OVERDUE_RETRY_MS = 250;

/** One held request's place in the registry: small on purpose, thousands of them are open at once. */
export class Waiter {
  private signalled = false;
  private released = false;
  private settle: ((reason: WakeReason) => void) | null = null;
  private timer: NodeJS.Timeout | undefined;
  /** The resolution that woke it, when the event says all a read would (the held read is answered from it). */
  resolution: ActionEvent | undefined;

  /** A resolution of the request arrived (possibly before anyone waits for it: it is remembered). */
  wake(event?: ActionEvent): void {
    if (event?.outcome && event.action.status !== 'pending') this.resolution = event;
    if (this.settle) this.finish('event');
    else this.signalled = true;
  }

  /** Stops the wait at once (shutdown, or the client went away). */
  release(): void {
    this.released = true;
    this.finish('released');
  }

  /** Resolves at the first of: a resolution event, `ms` passing, a release. */
  next(ms: number): Promise<WakeReason> {
    if (this.released) return Promise.resolve('released');
    if (this.signalled) {
      this.signalled = false;
      return Promise.resolve('event');
    }
    return new Promise((resolve) => {
      this.settle = resolve;
      this.timer = setTimeout(() => this.finish('timer'), Math.max(0, ms));
    });
  }

  private finish(reason: WakeReason): void {
    const settle = this.settle;
    if (!settle) return;
    this.settle = null;
    clearTimeout(this.timer);
    settle(reason);
  }
}

/**
 * The held waits of one gateway process: a single subscription to every resolution on the action event stream
 * (so a decision taken through any replica reaches it) and the waiters of each request id.
 */
export function createWaitRegistry(stream: ActionEventStream) {
  const byRequest = new Map<string, Set<Waiter>>();
  let closed = false;
  let unwatch: (() => void) | null = null;

  return {
    /** Opens the shared subscription; waits registered afterwards miss no resolution. */
    async start(): Promise<void> {
      unwatch = await stream.watchResolutions(
        (event) => {
          for (const waiter of byRequest.get(event.action.id) ?? []) waiter.wake(event);
        },
        // Resolutions may have gone by while the bus was reconnecting: every wait reads its request again.
        () => {
          for (const set of byRequest.values()) for (const waiter of set) waiter.wake();
        },
      );
    },

    /** Registers a waiter for a request; register BEFORE reading the request, so a resolution in between is seen. */
    register(requestId: string): { waiter: Waiter; unregister(): void } {
      const waiter = new Waiter();
      if (closed) waiter.release();
      const set = byRequest.get(requestId) ?? new Set<Waiter>();
      byRequest.set(requestId, set);
      set.add(waiter);
      return {
        waiter,
        unregister() {
          set.delete(waiter);
          if (set.size === 0 && byRequest.get(requestId) === set) byRequest.delete(requestId);
        },
      };
    },

    /** Waits open now (for tests and the bench). */
    size(): number {
      let n = 0;
      for (const set of byRequest.values()) n += set.size;
      return n;
    },

    /** Shutdown: every held wait answers at once, and new ones do not wait. */
    releaseAll(): void {
      closed = true;
      for (const set of byRequest.values()) for (const waiter of set) waiter.release();
    },

    stop(): void {
      this.releaseAll();
      unwatch?.();
    },
  };
}
export type WaitRegistry = ReturnType<typeof createWaitRegistry>;

/**
 * The request as a read after its resolution would show it: the pending view read before, with what the resolution
 * changed (its status, by whom and when, the reason, the passkey, the quorum's approvals, the receipt). Everything
 * else of the action object is fixed at creation. The event was written in the resolution's own statement.
 */
export function resolvedView(pending: ActionView, event: ActionEvent): ActionView {
  const { action, outcome } = event;
  if (!outcome) return pending;
  return {
    ...pending,
    status: action.status,
    resolved_by: action.resolved_by,
    resolved_at: action.resolved_at,
    receipt: action.receipt,
    reason: outcome.reason,
    user_verified: outcome.user_verified,
    passkey_id: outcome.passkey_id,
    quorum: outcome.quorum,
  };
}

/**
 * Reads a request and, while it is pending, holds on until it is resolved, expires, `seconds` pass or the wait is
 * released; answers the request as it then is (still pending on time-out): from the resolution's event when it
 * carries the outcome, else read again.
 */
export async function holdWhilePending(input: {
  registry: WaitRegistry;
  requestId: string;
  seconds: number;
  read: () => Promise<ActionView>;
  /** Registers what to call when the client goes away: the wait ends without another read. */
  onClientGone?: (listener: () => void) => void;
  /** Whether a resolution's event leaves out something this reader needs (then the request is read again). */
  readAfter?: (resolution: ActionEvent) => boolean;
}): Promise<ActionView> {
  const deadline = Date.now() + input.seconds * 1000;
  const { waiter, unregister } = input.registry.register(input.requestId);
  input.onClientGone?.(() => waiter.release());
  try {
    let action = await input.read();
    while (action.status === 'pending') {
      const left = deadline - Date.now();
      if (left <= 0) return action;
      const untilExpiry = Date.parse(action.expires_at) - Date.now() + EXPIRY_MARGIN_MS;
      const reason = await waiter.next(Math.min(left, untilExpiry > 0 ? untilExpiry : OVERDUE_RETRY_MS));
      if (reason === 'released') return action;
      // The resolution's event holds what changed: answering from it spares a second bus request (and its wait
      // behind every other request to the actions service) on the path from the decision to the agent.
      const resolution = reason === 'event' ? waiter.resolution : undefined;
      if (resolution && resolution.action.id === action.id && !input.readAfter?.(resolution))
        return resolvedView(action, resolution);
      action = await input.read();
    }
    return action;
  } finally {
    unregister();
  }
}
