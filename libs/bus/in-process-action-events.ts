import { ActionEvent } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { createLimiter } from './dispatch.js';
import type { ActionEventStream, ConsumerSpec } from './action-event-stream.js';

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
  let turn = 0;

  const deliver = async (event: ActionEvent) => {
    if (groups.size === 0) throw errors.unavailable('No consumer of action events is running');
    for (const members of groups.values()) {
      const member = members[turn++ % members.length]!;
      await member.run(() => member.spec.handler(event));
    }
    for (const listener of watchers.get(event.account_id) ?? []) queueMicrotask(() => listener(event));
  };

  return {
    async append(events) {
      const stored = new Set<string>();
      await Promise.all(
        events.map(async (input) => {
          const event = ActionEvent.parse(JSON.parse(JSON.stringify(input)));
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

    watch(accountId, listener) {
      const set = watchers.get(accountId) ?? new Set();
      watchers.set(accountId, set);
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) watchers.delete(accountId);
      };
    },
  };
}
