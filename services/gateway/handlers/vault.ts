import type { FastifyInstance } from 'fastify';
import {
  CreateCredentialBody,
  vaultEndpoints as ep,
  CredentialParams,
  newCredentialOf,
  RequestParams,
} from '@agent-auth/contracts';
import type { Bus } from '@agent-auth/bus';
import type { GatewaySettings } from '@agent-auth/config';
import { addRoute } from './route.js';

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
    // Sent once: the bus sends it again by itself when its executor dies or goes silent, and that resend (the same
    // call) is answered with the first send's outcome, the upstream called once. A second call of the gateway's own
    // after a 503 or 504 would be a new call, told only 409 already_executed, after twice the wait.
    handler: ({ principal, params, requestId }) =>
      bus.request(
        ep.execute,
        { agent: principal, request_id: params.request_id },
        { requestId, timeoutMs: executeTimeoutMs },
      ),
  });
}
