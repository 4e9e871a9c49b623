import { ActionEvent, type ActionEventType } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { createLimiter } from './dispatch.js';
import type { ActionEventStream, ConsumerSpec } from './action-event-stream.js';

// What the in-process stream keeps for resumed event streams: the most recent events, for at most a day.
const KEPT_EVENTS = 10_000;
const KEPT_MS = 24 * 3600_000;
/**
 * The events kept whole: the only type a stream is resumed from (an agent's stream shows resolutions alone, and its
 * Last-Event-ID is one). Of the others only the id is kept (to show each once): every kept event outlived two
 * young-generation collections and was copied by both, 1.3 kB per create.
 */
const REPLAYED: ActionEventType = 'action.resolved';

interface Member {
  spec: ConsumerSpec;
  run: <T>(task: () => Promise<T>) => Promise<T>;
}

/**
 * All-in-one mode without NATS: there is no stream to keep events in, so `append` hands each event to one member
 * of every consumer group and succeeds only once each has handled it. The outbox row stays unpublished until
 * then, so the database plays the stream's part: nothing is lost if the process stops in between.
 */
export function createInProcessActionEvents(): ActionEventStream {
  const groups = new Map<string, Member[]>();
  const watchers = new Map<string, Set<(event: ActionEvent) => void>>();
  const resolutionWatchers = new Set<(event: ActionEvent) => void>();
  const recent: Array<{ event: ActionEvent; at: number }> = [];
  let turn = 0;

  // Ids of the events shown to watchers, oldest first, so an event appended again is not shown twice.
  const shownIds: Array<{ id: string; at: number }> = [];
  const shown = new Set<string>();
  const keep = (event: ActionEvent) => {
    const now = Date.now();
    shownIds.push({ id: event.id, at: now });
    shown.add(event.id);
    while (shownIds.length > KEPT_EVENTS || (shownIds.length && shownIds[0]!.at < now - KEPT_MS))
      shown.delete(shownIds.shift()!.id);
    if (event.type !== REPLAYED) return;
    recent.push({ event, at: now });
    while (recent.length > KEPT_EVENTS || (recent.length && recent[0]!.at < now - KEPT_MS)) recent.shift();
  };
  const watchAccount = (accountId: string, listener: (event: ActionEvent) => void) => {
    const set = watchers.get(accountId) ?? new Set();
    watchers.set(accountId, set);
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) watchers.delete(accountId);
    };
  };

  /** Shows an event to the live watchers (held waits, event streams) once, however often it is appended. */
  const show = (event: ActionEvent) => {
    if (shown.has(event.id)) return;
    keep(event);
    for (const listener of watchers.get(event.account_id) ?? []) queueMicrotask(() => listener(event));
    if (event.type === 'action.resolved')
      for (const listener of resolutionWatchers) queueMicrotask(() => listener(event));
  };

  const deliver = async (event: ActionEvent) => {
    if (groups.size === 0) throw errors.noEventConsumer();
    // The live view first, as a stream shows an event to its subscribers when it stores it: a held wait or an
    // agent's stream does not wait for the consumers' work (a webhook's delivery row, push notifications).
    show(event);
    for (const members of groups.values()) {
      const only = members[0]!.spec.only;
      if (only && only !== event.type) continue;
      const member = members[turn++ % members.length]!;
      await member.run(() => member.spec.handler(event));
    }
  };

  // As the NATS stream's consumers do with what they cannot parse: one malformed event (an outbox row of an older
  // shape, say) neither holds back the others appended with it nor comes back every second. Kept (not dropped)
  // while no consumer could have taken it.
  const dropMalformed = (id: string, issues: string): boolean => {
    if (groups.size === 0) return false;
    for (const [member] of groups.values())
      member!.spec.log.error({ event_id: id, issues }, 'dropped a malformed action event');
    return true;
  };

  return {
    async append(events) {
      const stored = new Set<string>();
      await Promise.all(
        events.map(async (input) => {
          // The parse builds a fresh object (no consumer shares the relay's) and normalizes the timestamps, as a
          // consumer of the NATS stream gets them; the input is plain JSON data already (the outbox rows).
          const parsed = ActionEvent.safeParse(input);
          if (!parsed.success) {
            if (dropMalformed(input.id, parsed.error.message)) stored.add(input.id);
            return;
          }
          const event = parsed.data;
          try {
            await deliver(event);
            stored.add(event.id);
          } catch {
            /* stays in the outbox and is offered again */
          }
        }),
      );
      return stored;
    },

    async consume(spec) {
      const limiter = createLimiter(spec.concurrency);
      const member: Member = { spec, run: limiter.run };
      groups.set(spec.name, [...(groups.get(spec.name) ?? []), member]);
      return {
        async stop() {
          const rest = (groups.get(spec.name) ?? []).filter((m) => m !== member);
          if (rest.length) groups.set(spec.name, rest);
          else groups.delete(spec.name);
          await limiter.drained();
        },
      };
    },

    watch: watchAccount,

    async watchResolutions(listener) {
      resolutionWatchers.add(listener);
      return () => resolutionWatchers.delete(listener);
    },

    async follow(accountId, { afterId, type }, listener) {
      const ofInterest = (e: ActionEvent) => e.account_id === accountId && e.type === type;
      // Only resolutions are kept whole (REPLAYED): a stream of another type resumes with live events alone.
      const from = type === REPLAYED ? recent.findIndex((r) => r.event.id === afterId) : -1;
      // Replayed and live events are taken in the same tick, so none falls between them.
      const missed =
        from < 0
          ? []
          : recent
              .slice(from + 1)
              .map((r) => r.event)
              .filter(ofInterest);
      for (const event of missed) queueMicrotask(() => listener(event));
      return watchAccount(accountId, (event) => {
        if (event.type === type) listener(event);
      });
    },
  };
}
