import type { AccountAgents } from '../adapters/agents.js';
import type { ClientDocuments } from '../adapters/client-documents.js';
import type { AuthorizationStore } from '../store/authorizations.js';
import type { ClientStore } from '../store/clients.js';
import type { ConnectionStore } from '../store/connections.js';

/** Everything the identity use cases need, passed in (no singletons). */
export interface IdentityDeps {
  clients: ClientStore;
  authorizations: AuthorizationStore;
  connections: ConnectionStore;
  agents: AccountAgents;
  documents: ClientDocuments;
  /** Tells every gateway at once to drop a connection's access tokens from its cache (revoked, or one of them). */
  dropFromCaches: (connection: { id: string; agent_id: string }) => void;
  settings: {
    accessTokenSeconds: number;
    refreshTokenSeconds: number;
    /** Hosts whose client ID metadata documents may be fetched over http (local development). */
    insecureHosts: readonly string[];
  };
}
