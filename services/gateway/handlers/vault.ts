import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import {
  CreateCredentialBody,
  vaultEndpoints as ep,
  CredentialParams,
  newCredentialOf,
  RequestParams,
} from '@agent-auth/contracts';
import type { Bus } from '@agent-auth/bus';
import { isAppError } from '@agent-auth/errors';
import type { GatewaySettings } from '@agent-auth/config';
import { addRoute } from './route.js';

/**
 * Sends an execution, and once more when the bus found no executor or the executor did not answer (it may have
 * stopped): the claim in the actions service makes the call run at most once, so the retry either makes a call
 * that never started or is told it already ran (409), instead of the agent getting a bare 503/504.
 */
async function executeOnce(
  bus: Bus,
  payload: z.output<typeof ep.execute.request>,
  options: { requestId: string; timeoutMs: number },
) {
  try {
    return await bus.request(ep.execute, payload, options);
  } catch (err) {
    if (!isAppError(err) || (err.status !== 503 && err.status !== 504)) throw err;
    return bus.request(ep.execute, payload, options);
  }
}

/** Vault credentials (device), the agent's services and the execution of an approved call. */
export function vaultRoutes(app: FastifyInstance, bus: Bus, config: GatewaySettings): void {
  // An execution waits for the upstream: give the bus reply the executor's own time limits plus a margin.
  const executeTimeoutMs = Math.max(
    config.BUS_TIMEOUT_MS,
    config.VAULT_CONNECT_TIMEOUT_MS + config.VAULT_RESPONSE_TIMEOUT_MS + 5_000,
  );
  addRoute(app, {
    method: 'POST',
    url: '/vault/credentials',
    tag: 'Vault',
    summary: 'Store a credential',
    description:
      'Stores a credential encrypted at rest: `{service_name, credential_value, auth_type?, ' +
      'auth_header?, allowed_hosts, description?}`. The value is never shown again. 409 when the ' +
      'service name exists.',
    auth: 'device',
    body: CreateCredentialBody,
    response: ep.createCredential.response,
    handler: ({ principal, body, requestId }) =>
      bus.request(ep.createCredential, newCredentialOf(principal, body), { requestId }),
  });
  addRoute(app, {
    method: 'GET',
    url: '/vault/credentials',
    tag: 'Vault',
    summary: 'List credentials',
    description: "The account's credentials without their values.",
    auth: 'device',
    response: ep.listCredentials.response,
    handler: ({ principal, requestId }) => bus.request(ep.listCredentials, { device: principal }, { requestId }),
  });
  addRoute(app, {
    method: 'DELETE',
    url: '/vault/credentials/:credential_id',
    tag: 'Vault',
    summary: 'Delete a credential',
    description: 'Removes a credential for good. 404 when missing.',
    auth: 'device',
    params: CredentialParams,
    response: ep.deleteCredential.response,
    handler: ({ principal, params, requestId }) =>
      bus.request(ep.deleteCredential, { device: principal, credential_id: params.credential_id }, { requestId }),
  });
  addRoute(app, {
    method: 'GET',
    url: '/vault/services',
    tag: 'Vault',
    summary: 'List vault services',
    description: 'The services the calling agent may ask to call through the vault, with their allowed hosts.',
    auth: 'agent',
    response: ep.listServices.response,
    handler: ({ principal, requestId }) => bus.request(ep.listServices, { agent: principal }, { requestId }),
  });
  addRoute(app, {
    method: 'POST',
    url: '/vault/execute/:request_id',
    tag: 'Vault',
    summary: 'Execute an approved call',
    description:
      'Makes the approved vault call once, with the credential injected, and answers `{status_code, ' +
      'headers, body}` from the upstream. 403 when not approved, on a content hash mismatch or a ' +
      'refused host or address; 409 when already executed; 502 on an upstream failure.',
    auth: 'agent',
    params: RequestParams,
    handler: ({ principal, params, requestId }) =>
      executeOnce(bus, { agent: principal, request_id: params.request_id }, { requestId, timeoutMs: executeTimeoutMs }),
  });
}
