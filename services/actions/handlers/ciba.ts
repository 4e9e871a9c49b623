import { type BoundHandler, handle } from '@agent-auth/bus';
import { cibaEndpoints as ep } from '@agent-auth/contracts';
import type { UseCases } from '../use-cases/use-cases.js';

/** OpenID Connect CIBA: the backchannel request and its grant, the agents' ping endpoints, the notifier's pings. */
export function cibaHandlers(uc: UseCases): BoundHandler[] {
  return [
    handle(ep.authorize, (request, ctx) => uc.ciba.authorize(request, ctx)),
    handle(ep.token, (request) => uc.ciba.token(request)),
    handle(ep.getClient, ({ device, agent_id }) => uc.ciba.client(device, agent_id)),
    handle(ep.setClient, (request) => uc.ciba.setClient(request)),
    handle(ep.ping, (request) => uc.ciba.ping(request)),
  ];
}
