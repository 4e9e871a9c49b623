import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { StoredText, actionsEndpoints as ep, ApproveBody, CreateActionBody, DenyBody, ListActionsQuery } from '@agent-auth/contracts';
import type { Bus } from '@agent-auth/bus';
import type { Authenticator } from './auth.js';
import { addRoute } from './route.js';

const RequestParams = z.object({ request_id: StoredText().max(100) });

/** Action requests: the agent's side (create, read, list) and the device's (pending, approve, deny). */
export function actionRoutes(app: FastifyInstance, bus: Bus, auth: Authenticator): void {
  addRoute(app, auth, {
    method: 'POST', url: '/actions', auth: 'agent', body: CreateActionBody, response: ep.create.response,
    handler: ({ principal, body, requestId }) => bus.request(ep.create, { agent: principal, body }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'GET', url: '/actions', auth: 'agent', query: ListActionsQuery, response: ep.list.response,
    handler: ({ principal, query, requestId }) => bus.request(ep.list, { agent: principal, query }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'GET', url: '/actions/:request_id', auth: 'agent', params: RequestParams, response: ep.get.response,
    handler: ({ principal, params, requestId }) => bus.request(ep.get, { agent: principal, id: params.request_id }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'GET', url: '/pending', auth: 'device', response: ep.pending.response,
    handler: ({ principal, requestId }) => bus.request(ep.pending, { device: principal }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'POST', url: '/actions/:request_id/approve', auth: 'device', params: RequestParams, body: ApproveBody, bodyOptional: true, response: ep.approve.response,
    handler: ({ principal, params, body, requestId }) => bus.request(ep.approve, { device: principal, id: params.request_id, body }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'POST', url: '/actions/:request_id/deny', auth: 'device', params: RequestParams, body: DenyBody, bodyOptional: true, response: ep.deny.response,
    handler: ({ principal, params, body, requestId }) => bus.request(ep.deny, { device: principal, id: params.request_id, body }, { requestId }),
  });
}
