import type { Bus } from '@agent-auth/bus';
import type { IdentitySettings } from '@agent-auth/config';
import { identityEndpoints, identityRevoked, vaultEndpoints } from '@agent-auth/contracts';
import { packageDir, type Sql } from '@agent-auth/db';
import { serveBusService } from '@agent-auth/lifecycle';
import type { Logger } from '@agent-auth/logging';
import { serviceOutboundClient } from '@agent-auth/outbound';
import { agentsOverBus } from './adapters/agents.js';
import { clientDocumentsOver, MAX_DOCUMENT_BYTES } from './adapters/client-documents.js';
import { oauthHandlers } from './handlers/oauth.js';
import { createAuthorizationStore } from './store/authorizations.js';
import { createClientStore } from './store/clients.js';
import { createConnectionStore } from './store/connections.js';
import { createAuthorizations } from './use-cases/authorizations.js';
import { createClients } from './use-cases/clients.js';
import { createConnections } from './use-cases/connections.js';
import type { IdentityDeps } from './use-cases/deps.js';
import { createTokens } from './use-cases/tokens.js';
import { startPruner } from './workers/pruner.js';

/**
 * Migrates the identity schema and serves the identity endpoints on the bus: OAuth clients, the holder's consent,
 * codes, tokens and connected apps (any number of replicas share them).
 */
export async function startIdentityService(input: { bus: Bus; sql: Sql; settings: IdentitySettings; log: Logger }) {
  const { bus, sql, settings, log } = input;
  // Client ID metadata documents are fetched through the vault executor unless OUTBOUND_VIA=direct.
  const outbound = serviceOutboundClient({
    via: settings.OUTBOUND_VIA,
    options: {
      allowInsecureHosts: settings.ALLOW_INSECURE_HOSTS,
      connectTimeoutMs: 3_000,
      responseTimeoutMs: 5_000,
      maxResponseBytes: MAX_DOCUMENT_BYTES,
    },
    relay: (call) => bus.request(vaultEndpoints.relay, call, { timeoutMs: 10_000 }),
  });
  const deps: IdentityDeps = {
    clients: createClientStore(sql),
    authorizations: createAuthorizationStore(sql),
    connections: createConnectionStore(sql),
    agents: agentsOverBus(bus),
    documents: clientDocumentsOver(outbound),
    dropFromCaches: (connection) => bus.publish(identityRevoked, { connection_id: connection.id }),
    settings: {
      accessTokenSeconds: settings.OAUTH_ACCESS_TOKEN_TTL_SECONDS,
      refreshTokenSeconds: settings.OAUTH_REFRESH_TOKEN_TTL_SECONDS,
      insecureHosts: settings.ALLOW_INSECURE_HOSTS,
    },
  };
  const clients = createClients(deps);
  const connections = createConnections(deps);
  // An agent revoked on the actions service: the connections acting as it end (their tokens would act as it).
  const unsubscribe = bus.subscribe(identityRevoked, ({ agent_id, connection_id }) => {
    if (!agent_id || connection_id) return;
    connections
      .endForAgent(agent_id)
      .catch((err: unknown) => log.warn({ err }, "ending a revoked agent's connections failed"));
  });
  const served = await serveBusService({
    bus,
    sql,
    log,
    name: 'identity',
    description: 'OAuth clients, consent, codes, tokens and connected apps',
    migrations: { schema: 'identity', dir: `${packageDir(import.meta.url)}/store/migrations` },
    health: identityEndpoints.health,
    handlers: oauthHandlers({
      clients,
      authorizations: createAuthorizations(deps, clients),
      tokens: createTokens(deps, clients),
      connections,
    }),
    concurrency: settings.BUS_CONCURRENCY,
  });
  const pruner = startPruner(deps, log);
  return {
    async stop() {
      unsubscribe();
      await pruner.stop();
      await served.stop();
      await outbound.close();
    },
  };
}
