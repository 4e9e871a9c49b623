import type { FastifyInstance } from 'fastify';
import type { Bus } from '@agent-auth/bus';
import { AgentParams, cibaEndpoints as ep, setCibaClientRequestOf, UpdateAgentBody } from '@agent-auth/contracts';
import { addRoute } from './route.js';

/** An agent as an OpenID CIBA client: its details, and the ping endpoint its holder registers for it. */
export function cibaClientRoutes(app: FastifyInstance, bus: Bus): void {
  addRoute(app, {
    method: 'PATCH',
    url: '/agents/:agent_id',
    tag: 'Agents',
    summary: "Set an agent's CIBA ping endpoint",
    description:
      '`{backchannel_client_notification_endpoint: "https://…" | null}`: where the agent, as an OpenID CIBA ' +
      'client, is pinged when a request it made in ping mode is answered (null: poll only). https only (http ' +
      'only to hosts of `ALLOW_INSECURE_HOSTS`), no fragment. Answers the agent as a CIBA client, like ' +
      '`GET /agents/{agent_id}/ciba-client`. 404 for an agent of another account.',
    auth: 'device',
    params: AgentParams,
    body: UpdateAgentBody,
    response: ep.setClient.response,
    handler: ({ principal, params, body, requestId }) =>
      bus.request(ep.setClient, setCibaClientRequestOf(principal, params.agent_id, body), { requestId }),
  });
  addRoute(app, {
    method: 'GET',
    url: '/agents/:agent_id/ciba-client',
    tag: 'Agents',
    summary: 'Read an agent as a CIBA client',
    description:
      'The agent as an OpenID CIBA client: `client_id` (its agent id; the client secret is its API key), the ' +
      'token endpoint authentication methods, the delivery modes it may use and its ping endpoint (null when it ' +
      'polls only). 404 for an agent of another account.',
    auth: 'device',
    params: AgentParams,
    response: ep.getClient.response,
    handler: ({ principal, params, requestId }) =>
      bus.request(ep.getClient, { device: principal, agent_id: params.agent_id }, { requestId }),
  });
}
