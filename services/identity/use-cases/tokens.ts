import type { RequestContext } from '@agent-auth/bus';
import type { CodeExchange, TokenPrincipal, TokenRefresh, TokenRevocation, TokenSet } from '@agent-auth/contracts';
import { errors } from '@agent-auth/errors';
import { MCP_SCOPE, sameResource } from '../domain/authorization-request.js';
import { verifierMatches } from '../domain/pkce.js';
import type { ConnectionRow } from '../domain/rows.js';
import { looksLike, newIdentityId, newSecret, secretHash } from '../domain/secrets.js';
import type { Clients } from './clients.js';
import type { IdentityDeps } from './deps.js';

/**
 * Tokens: a code exchanged once for a connection's first pair, refresh tokens rotated on every use (a replay ends
 * the connection), revocation, and the check of an access token the gateway makes on a cache miss.
 */
export function createTokens(
  deps: Pick<IdentityDeps, 'connections' | 'authorizations' | 'agents' | 'dropFromCaches' | 'settings'>,
  clients: Clients,
) {
  const { connections, authorizations, agents, settings } = deps;

  const mint = () => {
    const access = newSecret('accessToken');
    const refresh = newSecret('refreshToken');
    return {
      set: {
        access_token: access,
        token_type: 'Bearer' as const,
        expires_in: settings.accessTokenSeconds,
        refresh_token: refresh,
        scope: MCP_SCOPE,
      } satisfies TokenSet,
      access: { hash: secretHash(access), seconds: settings.accessTokenSeconds },
      refresh: { hash: secretHash(refresh), seconds: settings.refreshTokenSeconds },
    };
  };

  /** Ends a connection (its tokens deleted) and tells every gateway. */
  const end = async (connectionId: string, reason: string) => {
    const ended = await connections.revoke(connectionId, reason);
    if (ended) deps.dropFromCaches({ id: ended.id, agent_id: ended.agent_id });
  };

  /** Whether the connection's agent is still one of the account's (read as the device that consented). */
  const agentLive = (connection: ConnectionRow, ctx: RequestContext) =>
    agents.isLive({ account_id: connection.account_id, device_ref: connection.consented_by }, connection.agent_id, ctx);

  return {
    async exchange(asked: CodeExchange): Promise<TokenSet> {
      const client = await clients.authenticate(asked.client);
      const used = looksLike('code', asked.code) ? await authorizations.useCode(secretHash(asked.code)) : undefined;
      if (!used) throw errors.oauthInvalidGrant('The code is unknown');
      const { row } = used;
      if (used.outcome === 'replayed') {
        // A code used twice may have been stolen: the tokens it gave are revoked (OAuth 2.1 4.1.3).
        if (row.connection_id) await end(row.connection_id, 'its code was used again');
        throw errors.oauthInvalidGrant('The code was used already; the tokens it gave are revoked');
      }
      if (row.client_id !== client.client_id) throw errors.oauthInvalidGrant('The code was issued to another client');
      if (used.outcome === 'expired') throw errors.oauthInvalidGrant('The code has expired (a code lives 60 s)');
      if (row.redirect_uri_given && asked.redirect_uri !== row.redirect_uri)
        throw errors.oauthInvalidGrant('redirect_uri: must be the one of the authorization request');
      if (!verifierMatches(asked.code_verifier, row.code_challenge))
        throw errors.oauthInvalidGrant('code_verifier: does not match the code_challenge of the authorization request');
      if (asked.resource !== null && !sameResource(asked.resource, row.resource))
        throw errors.oauthInvalidTarget(asked.resource.slice(0, 200), row.resource);
      const tokens = mint();
      await connections.open(
        {
          id: newIdentityId('connection'),
          account_id: row.account_id!,
          agent_id: row.agent_id!,
          client_id: row.client_id,
          resource: row.resource,
          scope: row.scope,
          consented_by: row.decided_by!,
          authorization_id: row.id,
        },
        tokens.access,
        tokens.refresh,
      );
      return tokens.set;
    },

    async refresh(asked: TokenRefresh, ctx: RequestContext): Promise<TokenSet> {
      const client = await clients.authenticate(asked.client);
      const hash = looksLike('refreshToken', asked.refresh_token) ? secretHash(asked.refresh_token) : undefined;
      const connection = hash === undefined ? undefined : await connections.ofRefreshToken(hash);
      if (!connection || connection.revoked_at)
        throw errors.oauthInvalidGrant('The refresh token is unknown or revoked');
      if (connection.client_id !== client.client_id)
        throw errors.oauthInvalidGrant('The refresh token was issued to another client');
      if (asked.resource !== null && !sameResource(asked.resource, connection.resource))
        throw errors.oauthInvalidTarget(asked.resource.slice(0, 200), connection.resource);
      if (!(await agentLive(connection, ctx))) {
        await end(connection.id, 'its agent was revoked');
        throw errors.oauthInvalidGrant('The agent this connection acts as was revoked');
      }
      const tokens = mint();
      const rotation = await connections.rotate(hash!, client.client_id, tokens.access, tokens.refresh);
      switch (rotation.outcome) {
        case 'rotated':
          return tokens.set;
        case 'replayed':
          // A rotated refresh token came back: one of its two holders is not the client. The family ends.
          await end(rotation.connection_id, 'a used refresh token was presented again');
          throw errors.oauthInvalidGrant('The refresh token was used already: its connection is revoked');
        case 'expired':
          throw errors.oauthInvalidGrant('The refresh token has expired');
        default:
          throw errors.oauthInvalidGrant('The refresh token is unknown or revoked');
      }
    },

    /** RFC 7009: a refresh token ends its connection; an access token is deleted. Unknown tokens are no error. */
    async revoke(asked: TokenRevocation): Promise<{ revoked: boolean }> {
      const client = await clients.authenticate(asked.client);
      const hash = secretHash(asked.token);
      if (looksLike('refreshToken', asked.token)) {
        const connection = await connections.ofRefreshToken(hash);
        if (!connection || connection.client_id !== client.client_id) return { revoked: false };
        await end(connection.id, 'revoked by its client');
        return { revoked: true };
      }
      if (looksLike('accessToken', asked.token)) {
        const found = await connections.ofAccessToken(hash);
        if (!found || found.connection.client_id !== client.client_id) return { revoked: false };
        await connections.deleteAccessToken(hash);
        deps.dropFromCaches({ id: found.connection.id, agent_id: found.connection.agent_id });
        return { revoked: true };
      }
      return { revoked: false };
    },

    async authenticate(accessToken: string): Promise<TokenPrincipal> {
      const found = looksLike('accessToken', accessToken)
        ? await connections.ofAccessToken(secretHash(accessToken))
        : undefined;
      if (!found) throw errors.accessTokenInvalid();
      if (found.expired) throw errors.accessTokenExpired();
      return {
        account_id: found.connection.account_id,
        agent_id: found.connection.agent_id,
        connection_id: found.connection.id,
        resource: found.connection.resource,
        expires_at: found.expires_at.toISOString(),
      };
    },
  };
}
