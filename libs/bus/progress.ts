import { Empty, type NatsConnection } from '@nats-io/transport-node';

interface Taken {
  reply: string;
  /** When the request was taken, then when progress was last said. */
  at: number;
  said: boolean;
}

/**
 * The serving side's "still on it": for every request taken and not yet answered, an empty message on its reply
 * subject once it has lasted half a heartbeat, then every heartbeat, until the answer goes. A request answered
 * sooner (nearly all of them) costs a set entry and no message. One ticker per served service, not a timer per
 * request. Only requesters that ask for it (their request carries a call id) are told: an empty message would be
 * an answer to any other.
 */
export function createProgress(nc: NatsConnection, heartbeatMs: number) {
  const taken = new Set<Taken>();
  const ticker = setInterval(
    () => {
      if (taken.size === 0) return;
      const now = performance.now();
      for (const t of taken) {
        if (now - t.at < (t.said ? heartbeatMs : heartbeatMs / 2)) continue;
        t.at = now;
        t.said = true;
        try {
          nc.publish(t.reply, Empty);
        } catch {
          // The connection is closing: the requester notices the silence and sends again.
        }
      }
    },
    Math.max(10, Math.floor(heartbeatMs / 4)),
  );
  ticker.unref();
  return {
    /** Notes a request taken; the returned function is called once it is answered. */
    taken(reply: string): () => void {
      const t: Taken = { reply, at: performance.now(), said: false };
      taken.add(t);
      return () => taken.delete(t);
    },
    stop() {
      clearInterval(ticker);
      taken.clear();
    },
  };
}
