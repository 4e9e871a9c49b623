import type { FastifyInstance } from 'fastify';
import { actionsEndpoints as ep, type ActionEvent, type ActionView, type AgentPrincipal } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import type { Bus } from '@agent-auth/bus';
import type { Logger } from '@agent-auth/logging';
import { sseEvent, type EventStreams } from '../use-cases/event-streams.js';
import { resolvedView } from '../use-cases/held-waits.js';
import type { RouteDoc } from './openapi.js';

const RESOLVED = 'action.resolved';
const CREATED = 'action.created';
/** Pending requests of one stream whose views are kept for their resolution (beyond it, the resolution reads). */
const MAX_PENDING_VIEWS = 1000;
const EVENT_ID = /^msg_[A-Za-z0-9]{1,64}$/;

/** The Last-Event-ID a client resumes from, when it is one of ours (anything else starts a fresh stream). */
export function resumeFrom(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  return value && EVENT_ID.test(value.trim()) ? value.trim() : undefined;
}

/**
 * GET /agent/events: the outcomes of the calling agent's own requests as server-sent events (`action.resolved`,
 * `id:` the event id, `data:` the full action object), with heartbeat comments; `Last-Event-ID` replays what the
 * action event stream still keeps after that event.
 */
export function agentEventRoutes(app: FastifyInstance, bus: Bus, streams: EventStreams, log: Logger): void {
  const doc: RouteDoc = {
    tag: 'Actions',
    summary: "Live outcomes of the agent's requests",
    eventStream: true,
    description:
      "Server-Sent Events of the calling agent's own requests: `event: action.resolved`, `id:` the event id, " +
      '`data:` the full action object, with heartbeat comments. `Last-Event-ID` resumes after that event within ' +
      "the event stream's retention.",
  };
  app.get('/agent/events', { config: { auth: 'agent', doc } }, async (request, reply) => {
    const agent = request.principal as AgentPrincipal | null;
    if (!agent || !('agent_id' in agent)) throw errors.notAuthenticated();
    const afterId = resumeFrom(request.headers['last-event-id']);
    const stream = streams.start(request, reply);
    if (!stream) return;

    // The event says what changed; the agent is sent the full action object, read as the agent would read it. The
    // read is done when the request's creation is seen, so that its resolution is sent at once, from the event
    // (as a held wait answers); a resolution without that earlier read (the request is older than the stream, or a
    // resumed stream replays resolutions only) reads then. Frames are sent one after the other, in event order.
    const pendingViews = new Map<string, Promise<ActionView | null>>();
    const read = (id: string) => bus.request(ep.get, { agent, id }, { requestId: request.id });
    const viewOf = async (event: ActionEvent): Promise<ActionView> => {
      const id = event.action.id;
      const pending = pendingViews.get(id);
      pendingViews.delete(id);
      const before = pending && (await pending);
      if (before && event.outcome) return resolvedView(before, event);
      return read(id).catch((err: unknown) => {
        log.warn(
          { err, action_id: id },
          'reading a resolved action for an agent stream failed; sending the event summary',
        );
        return { ...event.action, agent_id: event.agent_id } as unknown as ActionView;
      });
    };
    let queue = Promise.resolve();
    const forward = (event: ActionEvent) => {
      if (event.agent_id !== agent.agent_id) return;
      if (event.type === CREATED && pendingViews.size < MAX_PENDING_VIEWS) {
        pendingViews.set(
          event.action.id,
          read(event.action.id).catch(() => null),
        );
      }
      if (event.type !== RESOLVED) return;
      const view = viewOf(event);
      queue = queue.then(async () => stream.send(sseEvent({ id: event.id, event: RESOLVED, data: await view })));
    };
    if (!afterId) {
      stream.onClose(bus.actionEvents.watch(agent.account_id, forward));
      return;
    }
    try {
      stream.onClose(await bus.actionEvents.follow(agent.account_id, { afterId, type: RESOLVED }, forward));
    } catch (err) {
      // The stream is already open: tell the client by a comment, then keep it live without the replay.
      log.warn({ err }, 'replaying action events failed; the agent stream continues live');
      stream.send(': replay unavailable\n\n');
      stream.onClose(bus.actionEvents.watch(agent.account_id, forward));
    }
  });
}
