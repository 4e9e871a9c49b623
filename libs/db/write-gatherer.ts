/**
 * Gathering single writes into multi-row statements. A statement's fixed cost (executor start-up, commit, one round
 * trip, the client's encoding and parsing) dwarfs a small row's own: on the create path it was two thirds of
 * Postgres's CPU per request. So a write goes out at once when no statement is out; those that come while one is
 * out queue, and the next statement takes up to `maxBatch` of them. A further statement (up to `inFlight`) goes out
 * beside the first only for a full batch, or for writes that have waited `overdueMs`: one statement at a time
 * gathers the most, and more start only when one cannot keep up or is slow to commit. Idle, nothing waits; under
 * load, a write waits about one statement's time, as it would otherwise wait for a pool connection.
 */
export interface WriteGathering<I, O> {
  /** Writes the items as one statement; the answer holds one entry per item, in their order. */
  write: (items: I[]) => Promise<O[]>;
  /** Most statements out at once, each beyond the first for a full batch (leave pool connections for other work). */
  inFlight: number;
  /** Most items in one statement. */
  maxBatch: number;
  /**
   * How long a write may wait for the statement out before a further one (up to `inFlight`) takes it, full batch
   * or not: without it, a commit held up for 20 ms held every write behind it for 20 ms. Default: no limit.
   */
  overdueMs?: number;
  /**
   * Whether a failed statement of several items is tried again item by item, so that one item's error (a unique
   * violation, say) is that item's alone. Only for a failure that surely took the whole statement back (the server
   * refused it), never for one whose outcome is unknown (a connection lost at commit).
   */
  retryAlone: (err: unknown) => boolean;
  /** Items that may share a statement (the same quota, say); default: any. */
  sameStatement?: (a: I, b: I) => boolean;
}

interface Waiting<I, O> {
  item: I;
  /** When it was queued (performance.now()). */
  since: number;
  resolve: (value: O) => void;
  reject: (err: unknown) => void;
}

/** Makes a one-item write that gathers concurrent calls into multi-row statements (WriteGathering). */
export function gatherWrites<I, O>(gathering: WriteGathering<I, O>): (item: I) => Promise<O> {
  const { write, inFlight, maxBatch, retryAlone, overdueMs = Number.POSITIVE_INFINITY } = gathering;
  const sameStatement = gathering.sameStatement ?? (() => true);
  const queue: Waiting<I, O>[] = [];
  let out = 0;
  let overdueTimer: NodeJS.Timeout | undefined;

  const takeBatch = (): Waiting<I, O>[] => {
    const first = queue.shift()!;
    const batch = [first];
    for (let i = 0; i < queue.length && batch.length < maxBatch; ) {
      if (sameStatement(first.item, queue[i]!.item)) batch.push(...queue.splice(i, 1));
      else i++;
    }
    return batch;
  };

  const settle = async (batch: Waiting<I, O>[]): Promise<void> => {
    try {
      const answers = await write(batch.map((w) => w.item));
      for (const [i, w] of batch.entries()) w.resolve(answers[i]!);
    } catch (err) {
      if (batch.length > 1 && retryAlone(err)) await Promise.all(batch.map((w) => settle([w])));
      else for (const w of batch) w.reject(err);
    }
  };

  const waitedFor = () => performance.now() - queue[0]!.since;
  const pump = (): void => {
    while (queue.length && out < inFlight && (out === 0 || queue.length >= maxBatch || waitedFor() >= overdueMs)) {
      out++;
      void settle(takeBatch()).finally(() => {
        out--;
        pump();
      });
    }
    // The oldest waiting write is due its own statement at overdueMs, if the one out has not answered by then.
    if (queue.length && out < inFlight && overdueTimer === undefined && Number.isFinite(overdueMs)) {
      overdueTimer = setTimeout(() => {
        overdueTimer = undefined;
        pump();
      }, overdueMs - waitedFor());
      overdueTimer.unref();
    }
  };

  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, since: performance.now(), resolve, reject });
      pump();
    });
}
