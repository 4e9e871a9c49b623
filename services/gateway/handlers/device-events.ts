import type { FastifyInstance } from 'fastify';
import { type ActionEvent, type DevicePrincipal, identityRevoked } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import {
  notifierEndpoints as ep,
  PushSubscriptionBody,
  PushUnsubscribeBody,
  pushSubscriptionRequestOf,
  pushUnsubscribeRequestOf,
} from '@agent-auth/contracts';
import type { Bus } from '@agent-auth/bus';
import { addRoute } from './route.js';
import { type EventStreamConnection, sseEvent, type EventStreams } from '../use-cases/event-streams.js';
import type { RouteDoc } from './openapi.js';

/** One server-sent event: the event id (msg_…) lets a client drop a duplicate. */
export function sseFrame(event: ActionEvent): string {
  const data = {
    id: event.id,
    type: event.type,
    occurred_at: event.occurred_at,
    action: event.action,
    ...(event.escalation ? { escalation: escalationFrame(event.escalation) } : {}),
  };
  return sseEvent({ id: event.id, event: event.type, data });
}

/** What a device is told of an escalation: when, and to whom by id and name (emails stay with the notifier). */
function escalationFrame(e: NonNullable<ActionEvent['escalation']>) {
  return {
    escalate_at: e.escalate_at,
    escalated_at: e.escalated_at,
    members: e.members.map((m) => ({ member_id: m.member_id, name: m.name })),
  };
}

/**
 * Whether a device's stream carries an event: a routed request's creation only to its approvers (by member id or
 * role), an escalation only to the members it was handed to; outcomes to every device.
 */
export function streamedTo(device: Pick<DevicePrincipal, 'member_id' | 'role'>, event: ActionEvent): boolean {
  if (event.type === 'action.escalated')
    return !!event.escalation?.members.some((m) => m.member_id === device.member_id);
  if (event.type === 'action.created' && event.approvers)
    return event.approvers.includes(device.member_id) || event.approvers.includes(`role:${device.role}`);
  return true;
}

/** Whether a revocation (identity_revoked) ends a device's authentication: its own, or its member's. */
export function revokes(
  event: { device_ref?: string; member_id?: string },
  device: Pick<DevicePrincipal, 'device_ref' | 'member_id'>,
): boolean {
  return (
    (event.device_ref !== undefined && event.device_ref === device.device_ref) ||
    (event.member_id !== undefined && event.member_id === device.member_id)
  );
}

/**
 * GET /device/events: a live server-sent event stream of the device's account (`action.created` for a new
 * pending request, `action.resolved` for an outcome), with heartbeat comments; and the push-subscription routes.
 */
export function deviceEventRoutes(app: FastifyInstance, bus: Bus, streams: EventStreams): void {
  // A device revoked, or its member removed or given another role, loses its open stream at once on every gateway:
  // the app reconnects and is refused (401), or authenticated with the new role (and what it may be sent).
  const open = new Map<EventStreamConnection, DevicePrincipal>();
  const unsubscribe = bus.subscribe(identityRevoked, (event) => {
    for (const [stream, device] of open) if (revokes(event, device)) stream.close();
  });
  app.addHook('onClose', async () => unsubscribe());

  // Authenticated (and counted against the device's rate limit) by the admission hook, like every device route.
  const doc: RouteDoc = {
    tag: 'Notifications',
    summary: 'Live events of the account',
    eventStream: true,
    description:
      "Server-Sent Events of the device's account from the moment it connects: `action.created` (a new pending " +
      'request), `action.resolved` (approved, denied, expired) and, to the members it was handed to, ' +
      '`action.escalated` (with `escalation: {escalate_at, escalated_at, members}`), each with its event id; a heartbeat comment ' +
      'every DEVICE_STREAM_HEARTBEAT_MS. Missed events are not replayed: `GET /pending` is the state.',
  };
  app.get('/device/events', { config: { auth: 'device', doc } }, async (request, reply) => {
    const device = request.principal as DevicePrincipal | null;
    if (!device || !('device_ref' in device)) throw errors.notAuthenticated();
    const stream = streams.start(request, reply);
    if (!stream) return;
    open.set(stream, device);
    stream.onClose(() => open.delete(stream));
    stream.onClose(
      bus.actionEvents.watch(device.account_id, (event) => {
        if (streamedTo(device, event)) stream.send(sseFrame(event));
      }),
    );
  });

  addRoute(app, {
    method: 'GET',
    url: '/device/push-config',
    tag: 'Notifications',
    summary: 'Push configuration',
    description:
      '`{provider: "web_push" | null, vapid_public_key}`: whether the device can subscribe to Web Push,' +
      ' and the key to subscribe with.',
    auth: 'device',
    response: ep.pushConfig.response,
    handler: ({ principal, requestId }) => bus.request(ep.pushConfig, { device: principal }, { requestId }),
  });
  addRoute(app, {
    method: 'POST',
    url: '/device/push-subscriptions',
    tag: 'Notifications',
    summary: 'Subscribe to Web Push',
    description:
      'Registers a browser `PushSubscription` `{endpoint, keys: {p256dh, auth}}` for new pending ' +
      'requests. 409 when no push provider is configured.',
    auth: 'device',
    body: PushSubscriptionBody,
    response: ep.subscribePush.response,
    handler: ({ principal, body, requestId }) =>
      bus.request(ep.subscribePush, pushSubscriptionRequestOf(principal, body), { requestId }),
  });
  addRoute(app, {
    method: 'DELETE',
    url: '/device/push-subscriptions',
    tag: 'Notifications',
    summary: 'Unsubscribe from Web Push',
    description: 'Removes a subscription by its `{endpoint}`.',
    auth: 'device',
    body: PushUnsubscribeBody,
    response: ep.unsubscribePush.response,
    handler: ({ principal, body, requestId }) =>
      bus.request(ep.unsubscribePush, pushUnsubscribeRequestOf(principal, body), { requestId }),
  });
}
