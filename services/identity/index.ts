import type { Bus } from '@agent-auth/bus';
import { ConfigError, type IdentitySettings } from '@agent-auth/config';
import { identityEndpoints, identityRevoked, vaultEndpoints } from '@agent-auth/contracts';
import { packageDir, type Sql } from '@agent-auth/db';
import { serveBusService } from '@agent-auth/lifecycle';
import type { Logger } from '@agent-auth/logging';
import { type RelayedCall, serviceOutboundClient } from '@agent-auth/outbound';
import { agentsOverBus } from './adapters/agents.js';
import { clientDocumentsOver, MAX_DOCUMENT_BYTES } from './adapters/client-documents.js';
import { type IdentityProvider, identityProviderOver } from './adapters/identity-provider.js';
import { memberDevicesOverBus } from './adapters/members.js';
import { oauthHandlers } from './handlers/oauth.js';
import { signInHandlers } from './handlers/sign-in.js';
import { createAuthorizationStore } from './store/authorizations.js';
import { createClientStore } from './store/clients.js';
import { createConnectionStore } from './store/connections.js';
import { createSignInStore } from './store/sign-ins.js';
import { createAuthorizations } from './use-cases/authorizations.js';
import { createClients } from './use-cases/clients.js';
import { createConnections } from './use-cases/connections.js';
import type { IdentityDeps } from './use-cases/deps.js';
import { createSignIn } from './use-cases/sign-in.js';
import { createTokens } from './use-cases/tokens.js';
import { startPruner } from './workers/pruner.js';

type Relay = Parameters<typeof serviceOutboundClient>[0]['relay'];

/** A provider's discovery document or key set is a few KiB; a token answer less. */
const MAX_PROVIDER_ANSWER_BYTES = 256 * 1024;

/** Identity's way out (OUTBOUND_VIA: through the vault executor, or its own), for answers up to `maxResponseBytes`. */
function outboundOf(input: { settings: IdentitySettings; relay: Relay; maxResponseBytes: number }) {
  return serviceOutboundClient({
    via: input.settings.OUTBOUND_VIA,
    options: {
      allowInsecureHosts: input.settings.ALLOW_INSECURE_HOSTS,
      connectTimeoutMs: 3_000,
      responseTimeoutMs: 5_000,
      maxResponseBytes: input.maxResponseBytes,
    },
    relay: input.relay,
  });
}

/** The company's OpenID provider when OIDC_ISSUER is set (with its client's id and secret), else undefined. */
function configuredProvider(input: {
  settings: IdentitySettings;
  relay: Relay;
}): { provider: IdentityProvider; close: () => Promise<void> } | undefined {
  const { settings } = input;
  if (!settings.OIDC_ISSUER) return undefined;
  if (!settings.OIDC_CLIENT_ID || !settings.OIDC_CLIENT_SECRET)
    throw new ConfigError('OIDC_CLIENT_ID and OIDC_CLIENT_SECRET must be set with OIDC_ISSUER');
  const outbound = outboundOf({ settings, relay: input.relay, maxResponseBytes: MAX_PROVIDER_ANSWER_BYTES });
  const provider = identityProviderOver(outbound, {
    issuer: settings.OIDC_ISSUER,
    clientId: settings.OIDC_CLIENT_ID,
    clientSecret: settings.OIDC_CLIENT_SECRET,
    name: settings.OIDC_PROVIDER_NAME,
    insecureHosts: settings.ALLOW_INSECURE_HOSTS,
  });
  return { provider, close: () => outbound.close() };
}

/**
 * Migrates the identity schema and serves the identity endpoints on the bus: OAuth clients, the holder's consent,
 * codes, tokens and connected apps (any number of replicas share them).
 */
export async function startIdentityService(input: { bus: Bus; sql: Sql; settings: IdentitySettings; log: Logger }) {
  const { bus, sql, settings, log } = input;
  const relay = (call: RelayedCall) => bus.request(vaultEndpoints.relay, call, { timeoutMs: 10_000 });
  // Client ID metadata documents (and the OpenID provider's documents, keys and tokens) are fetched through the vault
  // executor unless OUTBOUND_VIA=direct.
  const idp = configuredProvider({ settings, relay });
  const outbound = outboundOf({ settings, relay, maxResponseBytes: MAX_DOCUMENT_BYTES });
  const signIns = createSignInStore(sql);
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
    handlers: [
      ...oauthHandlers({
        clients,
        authorizations: createAuthorizations(deps, clients),
        tokens: createTokens(deps, clients),
        connections,
      }),
      ...signInHandlers(createSignIn({ provider: idp?.provider, signIns, members: memberDevicesOverBus(bus) })),
    ],
    concurrency: settings.BUS_CONCURRENCY,
  });
  const pruner = startPruner({ ...deps, signIns }, log);
  return {
    async stop() {
      unsubscribe();
      await pruner.stop();
      await served.stop();
      await outbound.close();
      await idp?.close();
    },
  };
}
