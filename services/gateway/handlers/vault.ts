import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { CreateCredentialBody, StoredText, vaultEndpoints as ep } from '@agent-auth/contracts';
import type { Bus } from '@agent-auth/bus';
import type { Config } from '@agent-auth/config';
import type { Authenticator } from './auth.js';
import { addRoute } from './route.js';

const CredentialParams = z.object({ credential_id: StoredText().max(100) });
const RequestParams = z.object({ request_id: StoredText().max(100) });

/** Vault credentials (device, SPEC 4.7), the agent's services and the execution of an approved call (SPEC 4.5, 4.6). */
export function vaultRoutes(app: FastifyInstance, bus: Bus, auth: Authenticator, config: Config): void {
  // An execution waits for the upstream: give the bus reply the executor's own time limits plus a margin.
  const executeTimeoutMs = Math.max(config.BUS_TIMEOUT_MS, config.VAULT_CONNECT_TIMEOUT_MS + config.VAULT_RESPONSE_TIMEOUT_MS + 5_000);
  addRoute(app, auth, {
    method: 'POST', url: '/vault/credentials', auth: 'device', body: CreateCredentialBody, response: ep.createCredential.response,
    handler: ({ principal, body, requestId }) => bus.request(ep.createCredential, { device: principal, body }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'GET', url: '/vault/credentials', auth: 'device', response: ep.listCredentials.response,
    handler: ({ principal, requestId }) => bus.request(ep.listCredentials, { device: principal }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'DELETE', url: '/vault/credentials/:credential_id', auth: 'device', params: CredentialParams, response: ep.deleteCredential.response,
    handler: ({ principal, params, requestId }) => bus.request(ep.deleteCredential, { device: principal, credential_id: params.credential_id }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'GET', url: '/vault/services', auth: 'agent', response: ep.listServices.response,
    handler: ({ principal, requestId }) => bus.request(ep.listServices, { agent: principal }, { requestId }),
  });
  addRoute(app, auth, {
    method: 'POST', url: '/vault/execute/:request_id', auth: 'agent', params: RequestParams,
    handler: ({ principal, params, requestId }) =>
      bus.request(ep.execute, { agent: principal, request_id: params.request_id }, { requestId, timeoutMs: executeTimeoutMs }),
  });
}
