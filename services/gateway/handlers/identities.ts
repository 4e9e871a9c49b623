import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { StoredText, actionsEndpoints as ep, CreateAgentBody, CreateDeviceBody, SetPlanBody, SetPublicKeyBody } from '@agent-auth/contracts';
import type { Bus } from '@agent-auth/bus';
import type { Authenticator } from './auth.js';
import { addRoute } from './route.js';

const AgentParams = z.object({ agent_id: StoredText().max(100) });

/** Accounts, devices and agents (DESIGN "Accounts and identities"). */
export function identityRoutes(app: FastifyInstance, bus: Bus, auth: Authenticator): void {
  addRoute(app, auth, {
    method: 'POST', url: '/accounts', auth: 'none', body: CreateDeviceBody, bodyOptional: true, response: ep.createAccount.response,
    handler: ({ body, requestId }) => bus.request(ep.createAccount, { body }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'POST', url: '/devices', auth: 'device', body: CreateDeviceBody, bodyOptional: true, response: ep.createDevice.response,
    handler: ({ principal, body, requestId }) => bus.request(ep.createDevice, { device: principal, body }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'POST', url: '/agents', auth: 'device', body: CreateAgentBody, response: ep.createAgent.response,
    handler: ({ principal, body, requestId }) => bus.request(ep.createAgent, { device: principal, body }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'GET', url: '/agents', auth: 'device', response: ep.listAgents.response,
    handler: ({ principal, requestId }) => bus.request(ep.listAgents, { device: principal }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'DELETE', url: '/agents/:agent_id', auth: 'device', params: AgentParams, response: ep.deleteAgent.response,
    handler: ({ principal, params, requestId }) => bus.request(ep.deleteAgent, { device: principal, agent_id: params.agent_id }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'PUT', url: '/device/public-key', auth: 'device', body: SetPublicKeyBody, response: ep.setPublicKey.response,
    handler: ({ principal, body, requestId }) => bus.request(ep.setPublicKey, { device: principal, body }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'POST', url: '/totp/enroll', auth: 'device', response: ep.enrollTotp.response,
    handler: ({ principal, requestId }) => bus.request(ep.enrollTotp, { device: principal }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'GET', url: '/account', auth: 'device', response: ep.getAccount.response,
    handler: ({ principal, requestId }) => bus.request(ep.getAccount, { device: principal }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'POST', url: '/account/plan', auth: 'device', body: SetPlanBody, response: ep.setPlan.response,
    handler: ({ principal, body, requestId }) => bus.request(ep.setPlan, { device: principal, body }, { requestId }),
  });
}
