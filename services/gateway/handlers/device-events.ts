import type { FastifyInstance } from 'fastify';
import type { ActionEvent, DevicePrincipal } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { notifierEndpoints as ep, PushSubscriptionBody, PushUnsubscribeBody } from '@agent-auth/contracts';
import type { Bus } from '@agent-auth/bus';
import type { Config } from '@agent-auth/config';
import type { Authenticator } from './auth.js';
import { addRoute } from './route.js';

/** One server-sent event: the event id (msg_…) lets a client drop a duplicate. */
export function sseFrame(event: ActionEvent): string {
  const data = { id: event.id, type: event.type, occurred_at: event.occurred_at, action: event.action };
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * GET /device/events: a live server-sent event stream of the device's account (`action.created` for a new
 * pending request, `action.resolved` for an outcome), with heartbeat comments; and the push-subscription routes.
 */
export function deviceEventRoutes(app: FastifyInstance, bus: Bus, auth: Authenticator, config: Config): void {
  const open = new Set<() => void>();
  // Streams never end by themselves: close them first, or the server would wait for them on shutdown.
  app.addHook('preClose', async () => {
    for (const close of open) close();
  });

  // Authenticated (and counted against the device's rate limit) by the admission hook, like every device route.
  app.get('/device/events', { config: { auth: 'device' } }, async (request, reply) => {
    const device = request.principal as DevicePrincipal | null;
    if (!device || !('device_ref' in device)) throw errors.unauthorized('Not authenticated');
    // Hijacked: the headers set so far (the rate-limit ones) must be written by hand.
    const admitted = reply.getHeaders() as Record<string, string>;
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      ...admitted,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-request-id': request.id,
    });
    res.write('retry: 3000\n: connected\n\n');
    const unwatch = bus.actionEvents.watch(device.account_id, (event) => res.write(sseFrame(event)));
    const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), config.DEVICE_STREAM_HEARTBEAT_MS);
    const close = () => {
      clearInterval(heartbeat);
      unwatch();
      open.delete(close);
      res.end();
    };
    open.add(close);
    request.raw.on('close', close);
  });

  addRoute(app, auth, {
    method: 'GET', url: '/device/push-config', auth: 'device', response: ep.pushConfig.response,
    handler: ({ principal, requestId }) => bus.request(ep.pushConfig, { device: principal }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'POST', url: '/device/push-subscriptions', auth: 'device', body: PushSubscriptionBody, response: ep.subscribePush.response,
    handler: ({ principal, body, requestId }) => bus.request(ep.subscribePush, { device: principal, body }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'DELETE', url: '/device/push-subscriptions', auth: 'device', body: PushUnsubscribeBody, response: ep.unsubscribePush.response,
    handler: ({ principal, body, requestId }) => bus.request(ep.unsubscribePush, { device: principal, body }, { requestId }),
  });
}
