import { type BoundHandler, handle, handleOnce } from '@agent-auth/bus';
import { cibaEndpoints as ep } from '@agent-auth/contracts';
import type { UseCases } from '../use-cases/use-cases.js';

/** OpenID Connect CIBA: the backchannel request and its grant, the agents' ping endpoints, the notifier's pings. */
export function cibaHandlers(uc: UseCases): BoundHandler[] {
  return [
    // Kept per call, sealed: a resend gets the first auth_req_id (not a second request on the holder's device) and
    // the tokens issued (not "issued already").
    handleOnce(ep.authorize, (request, ctx) => uc.ciba.authorize(request, ctx)),
    handleOnce(ep.token, (request) => uc.ciba.token(request)),
    handle(ep.getClient, ({ device, agent_id }) => uc.ciba.client(device, agent_id)),
    handle(ep.setClient, (request) => uc.ciba.setClient(request)),
    handle(ep.ping, (request) => uc.ciba.ping(request)),
  ];
}
