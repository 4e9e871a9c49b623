import type { FastifyInstance } from 'fastify';
import type { Bus } from '@agent-auth/bus';
import {
  AuthorizationRequestParams,
  ConnectionParams,
  ConsentBody,
  consentDecisionOf,
  identityEndpoints as ep,
} from '@agent-auth/contracts';
import { addRoute } from './route.js';

/** The holder's side of OAuth on the device app: what a client asks, the answer, and the connected apps. */
export function oauthConsentRoutes(app: FastifyInstance, bus: Bus): void {
  addRoute(app, {
    method: 'GET',
    url: '/oauth/requests/:request_id',
    tag: 'OAuth',
    summary: 'Read an authorization request',
    description:
      'What an MCP client asks to connect as an agent of the account, for the consent page ' +
      "(`/app/#/connect?request={id}`, where `GET /oauth/authorize` sends the holder): the client's name and " +
      'kind (registered, or known by its client ID metadata document), the redirect URI and its host the answer goes ' +
      'to, the resource (`/mcp`) and scope. 404 once it expired (10 minutes); 409 once answered.',
    auth: 'device',
    params: AuthorizationRequestParams,
    response: ep.viewAuthorization.response,
    handler: ({ principal, params, requestId }) =>
      bus.request(ep.viewAuthorization, { device: principal, request_id: params.request_id }, { requestId }),
  });
  addRoute(app, {
    method: 'POST',
    url: '/oauth/consent',
    tag: 'OAuth',
    summary: 'Answer an authorization request',
    description:
      'The holder allows or denies an MCP client: `{request, allow, agent_id | agent_name}`. Allowing names the ' +
      'agent the client acts as: one of the account (`agent_id`) or a new one (`agent_name`). The answer is ' +
      "`redirect_to`, where the app sends the browser: the client's redirect URI with `code` (single use, 60 s, " +
      'exchanged with the PKCE verifier at `POST /oauth/token`), `state` and `iss`, or with `error=access_denied`. ' +
      '404 for an unknown or expired request or agent; 409 once answered.',
    auth: 'device',
    body: ConsentBody,
    response: ep.decideAuthorization.response,
    handler: ({ principal, body, requestId }) =>
      bus.request(ep.decideAuthorization, consentDecisionOf(principal, body), { requestId }),
  });
  addRoute(app, {
    method: 'GET',
    url: '/oauth/connections',
    tag: 'OAuth',
    summary: 'List connected apps',
    description:
      "The MCP clients connected to the account with OAuth, newest first: each one's client, the agent it acts " +
      'as, when it was connected and last refreshed its tokens.',
    auth: 'device',
    response: ep.listConnections.response,
    handler: ({ principal, requestId }) => bus.request(ep.listConnections, { device: principal }, { requestId }),
  });
  addRoute(app, {
    method: 'DELETE',
    url: '/oauth/connections/:connection_id',
    tag: 'OAuth',
    summary: 'Disconnect an app',
    description:
      'Revokes a connected app: its access and refresh tokens stop working at once, on every gateway. 404 for a ' +
      'connection unknown to the account or already revoked.',
    auth: 'device',
    params: ConnectionParams,
    response: ep.revokeConnection.response,
    handler: ({ principal, params, requestId }) =>
      bus.request(ep.revokeConnection, { device: principal, connection_id: params.connection_id }, { requestId }),
  });
}
