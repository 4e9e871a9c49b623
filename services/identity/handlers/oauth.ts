import { type BoundHandler, handle, handleOnce } from '@agent-auth/bus';
import { identityEndpoints as ep } from '@agent-auth/contracts';
import type { createAuthorizations } from '../use-cases/authorizations.js';
import type { Clients } from '../use-cases/clients.js';
import type { createConnections } from '../use-cases/connections.js';
import type { createTokens } from '../use-cases/tokens.js';

export interface OAuthUseCases {
  clients: Clients;
  authorizations: ReturnType<typeof createAuthorizations>;
  tokens: ReturnType<typeof createTokens>;
  connections: ReturnType<typeof createConnections>;
}

/** OAuth clients, consent, tokens and connected apps, on the bus. */
export function oauthHandlers(uc: OAuthUseCases): BoundHandler[] {
  return [
    // Kept per call, sealed (client secret, code, tokens): a resend gets the first answer, not a second client, nor
    // a code or refresh token used again (which would end the connection).
    handleOnce(ep.registerClient, (registration) => uc.clients.register(registration)),
    handle(ep.startAuthorization, (asked) => uc.authorizations.start(asked)),
    handle(ep.viewAuthorization, ({ device, request_id }) => uc.authorizations.view(device, request_id)),
    handleOnce(ep.decideAuthorization, (decision, ctx) => uc.authorizations.decide(decision, ctx)),
    handleOnce(ep.exchangeCode, (asked) => uc.tokens.exchange(asked)),
    handleOnce(ep.refreshTokens, (asked, ctx) => uc.tokens.refresh(asked, ctx)),
    handle(ep.revokeToken, (asked) => uc.tokens.revoke(asked)),
    handle(ep.authenticateToken, ({ access_token }) => uc.tokens.authenticate(access_token)),
    handle(ep.listConnections, ({ device }) => uc.connections.list(device)),
    handleOnce(ep.revokeConnection, ({ device, connection_id }) => uc.connections.revoke(device, connection_id)),
  ];
}
