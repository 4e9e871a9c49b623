import type { ActionEvent, ActionEventInput, ActionEventType } from '@agent-auth/contracts';
import type { Logger } from 'pino';

/** How a durable consumer is joined: every process using the same name shares its events (queue semantics). */
export interface ConsumerSpec {
  name: string;
  /** Resolving acknowledges the event; throwing has it delivered again later. */
  handler: (event: ActionEvent) => Promise<void>;
  /** Most events handled at once by this process. */
  concurrency: number;
  log: Logger;
  /**
   * Only events of this type reach the consumer (JetStream filters them on the server, so the others cost it
   * nothing); every event when absent. Changing it updates the durable consumer in place.
   */
  only?: ActionEventType;
}

/**
 * The durable stream of action events (JetStream over NATS, or inside the process in all-in-one mode without
 * NATS): appended by the actions service's outbox relay, consumed by the notifier, watched live by gateways.
 */
export interface ActionEventStream {
  /** Stores events durably, de-duplicated by id; resolves to the ids that are stored (the rest may be retried). */
  append(events: ActionEventInput[]): Promise<Set<string>>;
  /** Joins a durable consumer; events wait in the stream while no process consumes them. */
  consume(spec: ConsumerSpec): Promise<{ stop(): Promise<void> }>;
  /** A live, non-durable view of one account's events as they are appended (for device streams). */
  watch(accountId: string, listener: (event: ActionEvent) => void): () => void;
  /**
   * A live view of every account's resolutions, meant to be opened once per process (held waits share it).
   * Resolves once the subscription is in place, so nothing appended afterwards is missed while connected;
   * `onGap` is called when the connection to the bus came back after a loss, during which resolutions were missed.
   */
  watchResolutions(listener: (event: ActionEvent) => void, onGap?: () => void): Promise<() => void>;
  /**
   * One account's events of one type appended after the event `afterId`, replayed from what the stream still keeps,
   * then live ones as they come (a resumed event stream). When `afterId` is no longer kept, only events appended
   * from now on are delivered.
   */
  follow(
    accountId: string,
    options: { afterId: string; type: ActionEventType },
    listener: (event: ActionEvent) => void,
  ): Promise<() => void>;
}
